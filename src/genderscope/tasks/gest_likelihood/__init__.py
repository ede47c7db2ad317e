"""Task ``gest-likelihood``: the GEST paper's likelihood measurement for masked and causal LMs (GEST spec §8)."""
