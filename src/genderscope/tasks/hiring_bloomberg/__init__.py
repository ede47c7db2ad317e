"""GenderBench hiring_bloomberg probe."""
