"""Tiny random-initialised HF models for tests (re-exported from genderscope.backends.hf_tiny)."""

from genderscope.backends.hf_tiny import (  # noqa: F401
    CAUSAL_SPECIALS,
    MLM_SPECIALS,
    build_tiny_causal,
    build_tiny_mlm,
    genda_lens_texts,
    words_of,
)
