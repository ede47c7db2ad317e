"""Task ``winogenerated``: see :mod:`.task`."""
