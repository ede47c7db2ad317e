"""Tasks.  Each subpackage holds one task; ``genderscope/registry.py`` lists them."""
