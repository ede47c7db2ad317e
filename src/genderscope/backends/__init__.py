"""Model backends.  Each module holds one backend; ``genderscope/registry.py`` lists them."""
