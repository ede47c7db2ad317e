"""GenderBench hiring_an probe."""
