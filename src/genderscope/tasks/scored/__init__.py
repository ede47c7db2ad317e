"""The declarative layer of scored (likelihood) benchmarks: see :mod:`.benchmark`."""
