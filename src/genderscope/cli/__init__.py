"""The ``genderscope`` command line (typer)."""
