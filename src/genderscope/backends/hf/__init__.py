"""Hugging Face backends: masked and causal LMs, GGUF, batching."""
