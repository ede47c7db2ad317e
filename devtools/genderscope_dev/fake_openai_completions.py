"""Request parsing and response bodies of the fake server's ``/v1/completions``, ``/tokenize`` and
``/detokenize`` (wire format of vLLM's OpenAI-compatible server; the numbers come from
:class:`~genderscope_dev.fake_openai_model.EchoModel`).

``/v1/completions`` takes ``prompt`` as a string, a list of token ids, or a list of either (one choice
per prompt, ``index`` in order), ``echo``, ``logprobs`` (top-k, 0..5, or absent = no log-probs),
``max_tokens`` (default 16), ``temperature`` (0 = greedy; default 1), ``top_p``, ``seed``.  With
``echo`` a choice's ``text`` is the prompt followed by the generated text and its ``logprobs`` lists
the prompt's tokens first (first log-prob ``null``, ``top_logprobs`` ``null`` there), then the
generated ones.  Bodies are compact JSON in vLLM's key order (see :func:`completion_json`).
``top_logprobs[i]`` holds the k best tokens plus the token itself (token string ->
nats).  Fault kinds ``null`` (``"logprobs": null``) and ``no_logprobs`` (no ``logprobs`` key) break a
valid answer on purpose; ``logprob_shift`` adds a constant to every echoed prompt log-prob (a server
whose numbers are wrong).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from genderscope_dev.fake_openai_model import TOP_MAX, EchoModel, PromptError, Scored


@dataclass
class CompletionJob:
    """A parsed completions request: one (ids, token strings, prompt text) per prompt."""

    model: str | None
    prompts: list[tuple[list[int], list[str], str]]
    echo: bool
    k: int | None
    max_tokens: int
    temperature: float
    top_p: float
    seed: int
    keys: list[str] = field(default_factory=list)  # one stats key per prompt


def prompt_key(prompt: str | list[int]) -> str:
    """The stats key of one prompt: the text itself, or ``ids:1,2,3`` for token ids."""
    return prompt if isinstance(prompt, str) else "ids:" + ",".join(str(i) for i in prompt)


def _prompts(raw: Any) -> list[str | list[int]]:
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(x, int) and not isinstance(x, bool) for x in raw):
        return [raw]
    if isinstance(raw, list) and raw:
        if all(isinstance(x, str) for x in raw):
            return list(raw)
        if all(isinstance(x, list) and x and all(isinstance(i, int) for i in x) for x in raw):
            return list(raw)
    raise PromptError("'prompt' must be a string, a list of token ids, or a non-empty list of either")


def parse_completion(req: dict[str, Any], model: EchoModel) -> CompletionJob:
    """Check a completions request and tokenise its prompts (PromptError = HTTP 400)."""
    echo = bool(req.get("echo", False))
    k = req.get("logprobs")
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= TOP_MAX):
        raise PromptError(f"'logprobs' must be an integer between 0 and {TOP_MAX}")
    max_tokens = req.get("max_tokens", 16)
    if max_tokens is None:
        max_tokens = 16
    if not isinstance(max_tokens, int) or max_tokens < 0:
        raise PromptError("'max_tokens' must be a non-negative integer")
    temperature = float(req.get("temperature", 1.0) if req.get("temperature") is not None else 1.0)
    top_p = float(req.get("top_p", 1.0) if req.get("top_p") is not None else 1.0)
    seed = int(req.get("seed") or 0)
    add_special = bool(req.get("add_special_tokens", True))
    raw = _prompts(req.get("prompt"))
    prompts = []
    for p in raw:
        ids, strs = model.encode(p, add_special)
        if not ids:
            raise PromptError("the prompt is empty (no tokens)")
        if len(ids) + max_tokens > model.max_len:
            raise PromptError(
                f"This model's maximum context length is {model.max_len} tokens. However, you requested "
                f"{len(ids) + max_tokens} tokens ({len(ids)} in the messages, {max_tokens} in the "
                "completion). Please reduce the length of the messages or completion."
            )
        prompts.append((ids, strs, p if isinstance(p, str) else model.decode(ids)))
    return CompletionJob(
        req.get("model"), prompts, echo, k, max_tokens, temperature, top_p, seed, [prompt_key(p) for p in raw]
    )


def _top(
    model: EchoModel, best: list[tuple[int, float]], own: int, own_str: str, own_lp: float
) -> dict[str, float]:
    out = {(own_str if i == own else model.token_str(i)): lp for i, lp in best}
    out.setdefault(own_str, own_lp)
    return out


def _choice(
    model: EchoModel, job: CompletionJob, index: int, sc: Scored, fault: str, shift: float
) -> dict[str, Any]:
    ids, strs, text = job.prompts[index]
    k = job.k or 0
    if job.max_tokens == 0:
        gen, gen_lps, finish = [], [], "length"
    elif job.max_tokens == 1 and job.temperature <= 0:
        gen, gen_lps, finish = [sc.next_id], [sc.next_lp], "length"
        if sc.next_id == model.tok.eos_token_id:
            finish = "stop"
    else:
        gen, gen_lps, finish = model.sample(ids, job.max_tokens, job.temperature, job.top_p, job.seed)
    gen_strs = model.decode_steps(ids, gen)
    tokens: list[str] = []
    lps: list[float | None] = []
    tops: list[dict[str, float] | None] = []
    if job.echo:
        tokens += strs
        lps += [None] + [lp + shift for lp in sc.lps]
        tops += [None] + [
            _top(model, sc.top[t][:k], ids[t + 1], strs[t + 1], sc.lps[t]) for t in range(len(sc.lps))
        ]
    tokens += gen_strs
    lps += gen_lps
    if gen:
        tops.append(_top(model, sc.next_top[:k], gen[0], gen_strs[0], gen_lps[0]))
        tops += [{s: lp} for s, lp in zip(gen_strs[1:], gen_lps[1:])]
    offsets, at = [], 0
    for s in tokens:
        offsets.append(at)
        at += len(s)
    # vLLM's shape and key order: logprobs after text, top_logprobs after the lists
    choice: dict[str, Any] = {"index": index, "text": (text if job.echo else "") + "".join(gen_strs)}
    if fault != "no_logprobs":
        choice["logprobs"] = (
            None
            if job.k is None or fault == "null"
            else {"text_offset": offsets, "token_logprobs": lps, "tokens": tokens, "top_logprobs": tops}
        )
    choice.update(finish_reason=finish, stop_reason=None, prompt_logprobs=None)
    choice["_n_gen"] = len(gen)
    return choice


def completion_body(
    model: EchoModel, job: CompletionJob, scored: list[Scored], fault: str = "", shift: float = 0.0
) -> dict[str, Any]:
    """The ``text_completion`` object answering ``job`` (``scored``: one per prompt)."""
    choices = [_choice(model, job, i, sc, fault, shift) for i, sc in enumerate(scored)]
    n_prompt = sum(len(p[0]) for p in job.prompts)
    n_gen = sum(c.pop("_n_gen") for c in choices)
    return {
        "id": "cmpl-fake",
        "object": "text_completion",
        "created": 0,
        "model": job.model,
        "choices": choices,
        "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_gen, "total_tokens": n_prompt + n_gen},
    }


def completion_json(body: dict[str, Any]) -> bytes:
    """A completions body as vLLM writes it (pydantic's compact JSON, non-ASCII as is)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def tokenize_body(req: dict[str, Any], model: EchoModel) -> dict[str, Any]:
    """``/tokenize``: {prompt, add_special_tokens (default true), return_token_strs} -> {tokens, count,
    max_model_len[, token_strs]} (token_strs = the tokenizer's raw token strings, as vLLM)."""
    prompt = req.get("prompt")
    if not isinstance(prompt, str):
        raise PromptError("/tokenize needs 'prompt' (a string)")
    ids = list(model.tok(prompt, add_special_tokens=bool(req.get("add_special_tokens", True)))["input_ids"])
    out: dict[str, Any] = {"tokens": ids, "count": len(ids), "max_model_len": model.max_len}
    if req.get("return_token_strs"):
        out["token_strs"] = model.tok.convert_ids_to_tokens(ids)
    return out


def detokenize_body(req: dict[str, Any], model: EchoModel) -> dict[str, Any]:
    """``/detokenize``: {tokens: [ids]} -> {prompt: decoded text (special tokens kept)}."""
    ids = req.get("tokens")
    if not isinstance(ids, list) or not all(isinstance(i, int) and 0 <= i < len(model.tok) for i in ids):
        raise PromptError("/detokenize needs 'tokens' (a list of valid token ids)")
    return {"prompt": model.decode(ids)}
