"""Task ``gest-likelihood``: the GEST paper's likelihood measurement for masked/causal LMs (GEST spec §8)."""
