"""Task ``winogender``: see :mod:`.task`."""
