"""Tasks ``esbbq-gender`` and ``cabbq-gender``: EsBBQ and CaBBQ (Ruiz-Fernández et al. 2025), Gender."""
