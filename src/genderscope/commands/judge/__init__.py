"""``genderscope judge RUN_DIR --model SPEC``: regard of a generation run's texts by a judge model."""
