"""The version of genderscope (here, not in the package's __init__, so that modules read it without importing
the package root, which imports them)."""

__version__ = "0.1.0"
