"""Task ``honest``: HONEST (Nozza et al. 2021), hurtful sentence completions in six languages."""
