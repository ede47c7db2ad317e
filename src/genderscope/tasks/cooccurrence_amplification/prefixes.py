"""Prompts of task ``cooccurrence-amplification``: prefixes drawn from a reference corpus, the corpus's own
continuation of each (the baseline), and the chat wording for models that only chat.

Sampling: every whitespace token that starts a line (``--prefix-start line``) or every token (``any``) of a
document is a candidate start when the document holds ``prefix_tokens + continuation_words`` tokens from
it on. Sample j is candidate ``permutation(seed)[j]`` (``numpy.random.default_rng(seed)``; without
replacement while candidates last, then cycling), so the first n samples do not depend on ``--samples``.
The prompt is the corpus text from the start token to the end of the ``prefix_tokens``-th token (layout
and newlines kept); the reference continuation is the next ``continuation_words`` tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from genderscope.bordia.text import Document
from genderscope.common.errors import UsageError

_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class Prefix:
    """Sample ``index``: document ``doc``, start token ``start``; ``prompt`` and the corpus's ``reference``
    continuation."""

    index: int
    doc: int
    start: int
    prompt: str
    reference: str


def _spans(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, line-start flag) of the whitespace tokens of ``text``."""
    spans = np.array([m.span() for m in _TOKEN.finditer(text)], dtype=np.int64).reshape(-1, 2)
    starts, ends = spans[:, 0], spans[:, 1]
    first = np.ones(starts.size, bool)
    if starts.size > 1:
        nl = np.cumsum(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32) == 10)
        # a token starts a line when a newline lies between the previous token's end and its start
        first[1:] = nl[starts[1:] - 1] > nl[ends[:-1] - 1]
    return starts, ends, first


def sample_prefixes(
    docs: Sequence[Document],
    n: int,
    prefix_tokens: int,
    continuation_words: int,
    seed: int,
    start: str = "line",
) -> list[Prefix]:
    """``n`` prefixes with their reference continuations (see the module docstring)."""
    if prefix_tokens < 0 or continuation_words < 1 or n < 1:
        raise UsageError("--prefix-tokens must be ≥ 0, --max-tokens and --samples ≥ 1")
    if start not in ("line", "any"):
        raise UsageError(f"--prefix-start must be line or any, got {start!r}")
    need = prefix_tokens + continuation_words
    spans, cands = [], []
    for d, doc in enumerate(docs):
        s, e, first = _spans(doc.text)
        spans.append((s, e))
        ok = np.flatnonzero(
            (first if start == "line" else np.ones_like(first)) & (np.arange(s.size) + need <= s.size)
        )
        cands.append(np.column_stack([np.full(ok.size, d), ok]))
    pool = np.concatenate(cands) if cands else np.zeros((0, 2), np.int64)
    if pool.shape[0] == 0:
        raise UsageError(
            f"the corpus has no {start} start with {need} tokens after it (--prefix-tokens + --max-tokens)"
        )
    order = np.random.default_rng(seed).permutation(pool.shape[0])
    out = []
    for j in range(n):
        d, i = (int(v) for v in pool[order[j % order.size]])
        s, e = spans[d]
        text = docs[d].text
        cut = int(e[i + prefix_tokens - 1]) if prefix_tokens else int(s[i])
        prompt = text[int(s[i]) : cut] if prefix_tokens else ""
        reference = text[cut : int(e[i + need - 1])].strip()
        out.append(Prefix(j, d, i, prompt, reference))
    return out


CHAT_INSTRUCTION = (
    "Continue the following text. Write about {words} more words in the same style, as plain text. "
    "Reply with the continuation only: do not repeat the text, do not comment.\n\n{prompt}"
)
_PREAMBLE = re.compile(
    r"^\s*(sure|okay|ok|certainly|here(?:'s| is)|continuation)\b[^\n]*:\s*\n", re.IGNORECASE
)


def chat_prompt(prompt: str, words: int) -> str:
    """The user turn asking a chat model to continue ``prompt``."""
    return CHAT_INSTRUCTION.format(words=words, prompt=prompt)


def parse_chat_continuation(answer: str | None, prompt: str) -> str:
    """The continuation in a chat answer: a leading "Here is the continuation:" line, code fences and
    surrounding quotes removed, and the prompt removed when the answer repeats it first."""
    if not answer:
        return ""
    text = answer.strip()
    text = _PREAMBLE.sub("", text, count=1).strip()
    if text.startswith("```"):
        text = text.strip("`").partition("\n")[2] if "\n" in text else text.strip("`")
        text = text.rstrip("`").strip()
    if len(text) >= 2 and text[0] in "\"'“" and text[-1] in "\"'”":
        text = text[1:-1].strip()
    p = " ".join(prompt.split())
    flat = " ".join(text.split())
    if p and flat.startswith(p):
        text = flat[len(p) :].strip()
    elif p and flat.startswith("..."):
        text = flat[3:].strip()
    return text
