"""``python -m genderscope.cli``."""

from genderscope.cli.app import main

main()
