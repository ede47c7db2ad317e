"""Test helpers that tests, benchmarks, the demo and downstream users may import (no test framework needed).

* :mod:`genderscope.testing.tiny_models`: tiny random-initialised Hugging Face models (masked and causal)
  built on the fly, never downloaded.
* :mod:`genderscope.testing.fake_openai`: a local OpenAI-compatible server with scripted faults: chat,
  and completions with echoed prompt log-probs computed by a tiny causal LM (``--model-dir``).
"""
