"""Tasks.  Each subpackage holds one task; ``genderscope/catalogue.py`` lists them."""
