"""Start-up probe for an OpenAI-compatible ``/completions`` server: does it echo the prompt's log-probs,
and are the echoed log-probs the model's own?

:func:`probe_echo_logprobs` sends two requests through a caller-supplied ``post(path, body) -> parsed
JSON`` (the backend's own transport, so retries, keys and timeouts stay where they are):

1. ``{"prompt": "The nurse said that she", "echo": true, "logprobs": 5, "max_tokens": 1,
   "temperature": 0}``.  A server that answers without per-token log-probs for the prompt (the llama.cpp
   C++ server ignores ``echo``) is refused at once (:class:`BackendError`).
2. A plain completion of the prompt minus its last echoed token (``"The nurse said that"``, no echo,
   ``max_tokens`` 1, ``logprobs`` 5).  Its top log-probs are the model's distribution at the position of
   that last token, so they must equal the echoed one: the echoed log-prob of the token itself, and the
   most likely token there with its log-prob where the echo gives ``top_logprobs``.  The largest absolute
   difference (nats) must be within ``tolerance``.  A misaligned echo (llama-cpp-python's server shifts
   echoed log-probs by one token when the model adds no BOS: ``docs/servers.md``) differs by nats.

A server that fails check 2 is refused unless the user passed :data:`TRUST_ECHO_OPTION`; then the
probe is returned with ``consistent=False`` for the backend to record and warn about.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from genderscope.common.errors import BackendError

#: ``post(path, json_body) -> parsed JSON``; ``path`` is relative to the API root (``/completions``).
Post = Callable[[str, dict[str, Any]], Any]

PROBE_TEXT = "The nurse said that she"
#: nats; misaligned echoes differ by nats, while two prefills of different length on a bf16 GPU server
#: differ by ~1e-2 at most (float32 servers agree to ~1e-5)
DEFAULT_TOLERANCE = 0.05
TOP_K = 5
TRUST_ECHO_OPTION = "--trust-echo"
WHAT_WORKS = "vLLM's OpenAI-compatible server echoes prompt log-probs; for a local model file use " \
    "--model hf-causal:PATH"


@dataclass(frozen=True)
class EchoProbe:
    """What the probe saw at the last token of :data:`PROBE_TEXT` (log-probs in nats)."""

    token: str  #: the checked prompt token, as echoed (" she")
    prefix: str  #: the text before it ("The nurse said that")
    echo_logprob: float  #: its echoed log-prob
    completion_logprob: float | None  #: its log-prob in a plain completion of the prefix (None: not in top 5)
    echo_top: tuple[str, float] | None  #: most likely token at that position per the echo (None: not given)
    completion_top: tuple[str, float] | None  #: most likely next token after the prefix (None: no log-probs)
    difference: float  #: largest |echo - completion| over the compared log-probs (inf: top tokens differ)
    tolerance: float
    lead: str  #: what the echoed tokens spell before the probe text (a BOS string, ``start``, or "")

    @property
    def consistent(self) -> bool:
        """True when the echoed distribution equals the plain completion's within ``tolerance``."""
        return self.difference <= self.tolerance

    def summary(self) -> str:
        """One line: the checked token's log-prob both ways and the two most likely tokens."""
        if self.completion_top is None:
            return (f"{self.token!r} after {self.prefix!r}: echoed {self.echo_logprob:.4f} nats; a plain "
                    "completion returned no log-probs to check it against")
        comp = "not in the top 5" if self.completion_logprob is None else f"{self.completion_logprob:.4f}"
        line = (f"{self.token!r} after {self.prefix!r}: echoed {self.echo_logprob:.4f} nats, "
                f"plain completion {comp}; most likely next token: completion "
                f"{self.completion_top[0]!r} {self.completion_top[1]:.4f}")
        if self.echo_top is not None:
            line += f", echo {self.echo_top[0]!r} {self.echo_top[1]:.4f}"
        return line

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready record (for run.json)."""
        return {"token": self.token, "prefix": self.prefix, "echo_logprob": self.echo_logprob,
                "completion_logprob": self.completion_logprob,
                "echo_top": list(self.echo_top) if self.echo_top else None,
                "completion_top": list(self.completion_top) if self.completion_top else None,
                "difference": None if math.isinf(self.difference) else self.difference,  # None: ranks differ
                "token_difference": None if self.completion_logprob is None
                else abs(self.echo_logprob - self.completion_logprob),
                "tolerance": self.tolerance, "consistent": self.consistent}


def probe_echo_logprobs(post: Post, model: str, *, trust_echo: bool = False,
                        tolerance: float = DEFAULT_TOLERANCE, path: str = "/completions", start: str = "",
                        extra: Mapping[str, Any] | None = None) -> EchoProbe:
    """Check once that the server echoes prompt log-probs and that they are its model's own.

    Both requests are asked the way the backend asks: ``start`` (e.g. the BOS string it puts in front of
    every text) goes before the prompts and ``extra`` (e.g. ``{"add_special_tokens": False}``) into
    the bodies.
    Raises :class:`BackendError` (one line) when the server does not echo prompt log-probs, or when the
    echoed log-probs disagree with a plain completion by more than ``tolerance`` nats and ``trust_echo``
    is false.  Errors raised by ``post`` itself propagate (a :class:`BackendError` gains a hint).
    """
    base = {"model": model, "max_tokens": 1, "temperature": 0, "logprobs": TOP_K, **(extra or {})}
    echo = _logprobs(_ask(post, path, {**base, "prompt": start + PROBE_TEXT, "echo": True}))
    tokens, lps = echo.get("tokens"), echo.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(lps, list) or len(lps) != len(tokens):
        raise _no_echo("its answer has no logprobs.tokens/token_logprobs lists")
    end = _prompt_end(tokens)
    if end is None:
        raise _no_echo(f"the returned tokens {_short(tokens)} do not spell the prompt {PROBE_TEXT!r}")
    token, echo_lp = tokens[end], lps[end]
    if not _is_number(echo_lp):
        raise _no_echo(f"the prompt's last token {token!r} has log-prob {echo_lp!r}")
    prefix = PROBE_TEXT[: len(PROBE_TEXT) - len(token)]
    if not prefix:
        raise BackendError(f"echo probe: the server returned {PROBE_TEXT!r} as one token; cannot check it")
    echo_top = _best(_top_at(echo, end))

    plain = _logprobs(_ask(post, path, {**base, "prompt": start + prefix}))
    top = _top_at(plain, 0)
    if top is None and plain.get("tokens") and _is_number((plain.get("token_logprobs") or [None])[0]):
        top = {str(plain["tokens"][0]): float(plain["token_logprobs"][0])}
    probe = EchoProbe(token=token, prefix=prefix, echo_logprob=float(echo_lp),
                      completion_logprob=(top or {}).get(token), echo_top=echo_top, completion_top=_best(top),
                      difference=_difference(float(echo_lp), token, echo_top, top, tolerance) if top
                      else math.inf,
                      tolerance=tolerance, lead="".join(tokens[: end + 1])[: -len(PROBE_TEXT)])
    if probe.consistent or trust_echo:
        return probe
    if not top:
        raise _refuse(f"a plain completion of {prefix!r} returned no log-probs, so its echoed log-probs "
                      "cannot be checked")
    raise _refuse("its echoed prompt log-probs disagree with its own completions (" + probe.summary()
                  + "); llama-cpp-python's server, for one, shifts them by one token (docs/servers.md)")


def _difference(echo_lp: float, token: str, echo_top: tuple[str, float] | None,
                top: Mapping[str, float], tol: float) -> float:
    """Largest |echo - completion| over the compared log-probs; inf when a ranking contradicts."""
    diffs = []
    if token in top:
        diffs.append(abs(echo_lp - top[token]))
    elif echo_lp > min(top.values()) + tol:  # not in the top 5, so it must rank below all of them
        return math.inf
    if echo_top is not None:
        name, lp = echo_top
        if name in top:
            diffs.append(abs(lp - top[name]))
        elif lp > min(top.values()) + tol:  # left out of the top 5 only if tied with its last entry
            return math.inf
        best = max(top.values())
        diffs.append(abs(lp - best))  # the echo's best must be the completion's best (ties allowed)
    return max(diffs, default=0.0)


def _ask(post: Post, path: str, body: dict[str, Any]) -> Any:
    try:
        return post(path, body)
    except BackendError as exc:
        raise BackendError(f"{exc} (echo probe: {path} with echo and logprobs; {WHAT_WORKS})") from exc


def _logprobs(answer: Any) -> dict[str, Any]:
    """``choices[0].logprobs`` as a dict ({} when absent or not a dict)."""
    try:
        lp = answer["choices"][0].get("logprobs")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise BackendError(f"echo probe: the server's answer is not a text completion: {_short(answer)}") \
            from None
    return lp if isinstance(lp, dict) else {}


def _prompt_end(tokens: list[Any]) -> int | None:
    """Index of the prompt's last token: the first k where the joined tokens[:k+1] end with the prompt."""
    text = ""
    for k, tok in enumerate(tokens):
        if not isinstance(tok, str):
            return None
        text += tok
        if text.endswith(PROBE_TEXT):
            return k
    return None


def _top_at(lp: Mapping[str, Any], i: int) -> dict[str, float] | None:
    """``top_logprobs[i]`` as {token: log-prob}, or None when not given."""
    tops = lp.get("top_logprobs")
    if not isinstance(tops, list) or i >= len(tops) or not isinstance(tops[i], dict):
        return None
    return {str(k): float(v) for k, v in tops[i].items() if _is_number(v)} or None


def _best(top: Mapping[str, float] | None) -> tuple[str, float] | None:
    return None if not top else max(top.items(), key=lambda kv: kv[1])


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _short(x: Any) -> str:
    s = repr(x)
    return s[:120] + ("…" if len(s) > 120 else "")


def _no_echo(why: str) -> BackendError:
    return BackendError(f"the server does not echo prompt log-probs ({why}): the likelihood tasks need them "
                        f"(the llama.cpp C++ server does not return them); {WHAT_WORKS}")


def _refuse(why: str) -> BackendError:
    return BackendError(f"refusing this server: {why}; {WHAT_WORKS}, or pass {TRUST_ECHO_OPTION} to use "
                        "its echoed log-probs anyway")
