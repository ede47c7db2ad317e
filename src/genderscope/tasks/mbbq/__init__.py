"""Task ``mbbq``: MBBQ (Neplenbroek et al. 2024), Gender_identity, en/es/nl/tr with its control set."""
