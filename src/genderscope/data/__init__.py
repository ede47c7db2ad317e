"""Dataset files: pinned upstream URLs + sha256, resolved from a mirror, the cache or the network."""
