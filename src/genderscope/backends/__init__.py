"""Model backends.  Each module holds one backend; ``genderscope/catalogue.py`` lists them."""
