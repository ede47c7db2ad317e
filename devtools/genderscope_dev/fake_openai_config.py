"""The fake OpenAI server's behaviour: fault kinds, :class:`FakeConfig`, and the deterministic
chat answer to a prompt (:func:`expected_answer`, carrying :func:`prompt_ref`; with ``answer_rule``, a
rule of :mod:`genderscope_dev.answer_rules`: :func:`chat_answer`).

Fault kinds: ``429`` (with ``Retry-After``), ``500``/``502``/``503``, ``timeout`` (stall
``timeout_sleep`` s), ``malformed`` (HTTP 200, broken JSON), ``drop`` (close without answering),
``null`` (chat: content null; completions: ``"logprobs": null``), ``no_logprobs`` (completions: the
choice has no ``logprobs`` key; chat: as ``null``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from genderscope_dev.answer_rules import RULES
from genderscope_dev.answer_rules import answer as rule_answer

FAULT_KINDS = ("429", "500", "502", "503", "timeout", "malformed", "drop", "null", "no_logprobs")
OVER_CAPACITY = ("queue", "429")
#: faults of a created batch (fake_openai_batch); "" = none.  Here, not there, so that this module
#: validates them without importing fake_openai_batch (which imports this one)
BATCH_FAULTS = ("", "fail", "expire", "error_lines", "bad_request", "cancel", "stall")


@dataclass
class FakeConfig:
    """Behaviour of the fake server (every field can be changed at run time via ``POST /_config``)."""

    latency: float = 0.0  # seconds before each answer (and before each injected fault)
    fault_rate: float = 0.0  # probability that a request gets a fault drawn from ``faults``
    faults: list[str] = field(default_factory=lambda: ["429", "500", "timeout", "malformed", "drop"])
    schedule: list[str] = field(default_factory=list)  # faults for the 1st, 2nd, ... request of each prompt
    seed: int = 0  # seed of the fault draws
    fault_exempt: list[str] = field(default_factory=list)  # prompts (stats keys) never faulted
    retry_after: str = "0"  # Retry-After header sent with 429 (seconds or an HTTP date)
    timeout_sleep: float = 30.0  # how long a "timeout" fault stalls before answering
    status: int = 0  # if non-zero: answer chat requests with this HTTP status ...
    status_after: int = 0  # ... once this many chat requests have been served normally
    api_key: str | None = None  # if set: require "Authorization: Bearer <api_key>" (else 401)
    models: list[str] = field(default_factory=list)  # known model names; others get 404 (empty = any)
    # a rule of genderscope_dev.answer_rules ("rule-a", "rule-b"): chat answers are
    # answer_rules.answer(last user message, rule); "" = the default answers (expected_answer)
    answer_rule: str = ""
    # -- /v1/completions, /tokenize, /detokenize (see fake_openai_completions) ------------------
    model_dir: str | None = None  # a causal LM saved with save_pretrained; None = no completions route
    batch_tokens: int = 4096  # token budget of one forward pass over queued completions prompts
    torch_threads: int = 1  # torch CPU threads, process-wide (0 = leave as is); tiny forwards: 1 is fastest
    echo_logprobs: bool = True  # False: ignore `echo` (prompt log-probs never returned, as llama.cpp)
    logprob_shift: float = 0.0  # added to every echoed prompt log-prob (simulates a wrong server)
    single_prompt: bool = False  # True: a list of several prompts gets HTTP 500 (llama-cpp-python's server)
    # -- capacity (chat and completions requests; faults included) ---------------------------
    max_concurrency: int = 0  # requests served at once (0 = no cap); `latency` runs from admission
    over_capacity: str = "queue"  # beyond the cap: "queue" (wait for a slot, FIFO) or "429" (refuse)
    # -- Files and Batches (see fake_openai_batch) -------------------------------------------
    batch_schedule: list[str] = field(default_factory=list)  # faults of the 1st, 2nd, ... batch created
    batch_polls: int = 1  # retrieves a batch stays in_progress before it runs
    batch_max_requests: int = 50_000  # lines per input file (more: the batch fails validation)
    batch_max_bytes: int = 200_000_000  # bytes per input file

    def __post_init__(self) -> None:
        for f in list(self.schedule) + list(self.faults):
            if f and f not in FAULT_KINDS:
                raise ValueError(f"unknown fault {f!r}; known: {', '.join(FAULT_KINDS)}")
        for f in self.batch_schedule:
            if f not in BATCH_FAULTS:
                raise ValueError(f"unknown batch fault {f!r}; known: {', '.join(BATCH_FAULTS[1:])}")
        if self.over_capacity not in OVER_CAPACITY:
            raise ValueError(f"over_capacity must be one of {', '.join(OVER_CAPACITY)}")
        if self.answer_rule and self.answer_rule not in RULES:
            raise ValueError(f"unknown answer_rule {self.answer_rule!r}; known: {', '.join(RULES)}")


def prompt_ref(prompt: str) -> str:
    """First 12 hex digits of sha256(prompt): the reference echoed in every answer."""
    return hashlib.sha256(prompt.encode()).hexdigest()[:12]


def expected_answer(prompt: str, seed: int | None = None) -> str:
    """The answer the server gives to ``prompt`` (sent with ``seed``, if any)."""
    key = prompt if seed is None else f"{prompt}\x00{seed}"
    tag = "(a)(b)(c)"[3 * (int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 3) :][:3]
    return f"My answer is {tag}. [{prompt_ref(prompt)}]"


def chat_answer(config: FakeConfig, messages: list[dict[str, Any]], seed: int | None = None) -> str:
    """The chat answer to ``messages``: ``answer_rules.answer(last user message, rule)`` under
    ``config.answer_rule``, else :func:`expected_answer` of the last message (and ``seed``)."""
    if config.answer_rule:
        user = [m for m in messages if m.get("role") == "user"] or messages
        return rule_answer(str(user[-1]["content"]), config.answer_rule)
    return expected_answer(messages[-1]["content"], seed)


def chat_completion_body(model: str | None, content: str | None, prompt: str = "") -> dict[str, object]:
    """A ``chat.completion`` object answering ``prompt`` with ``content`` (usage: whitespace words)."""
    n_in, n_out = len(prompt.split()), len((content or "").split())
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
    }
