"""Test helpers that benchmarks and downstream users may import (no test framework needed)."""
