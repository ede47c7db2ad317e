"""``openai-completions:MODEL`` — an OpenAI-compatible ``/v1/completions`` server that echoes prompt
log-probs (vLLM), on one server or several: the causal-LM primitives over HTTP.

Servers, key, per-server concurrency, retries, failover, pausing and run statistics: see
:mod:`~genderscope.backends.openai.http` (shared with ``openai:``).  Kinds answered:

* ``token_logprobs`` {text}: one echo of ``S + text`` (``echo``, ``logprobs`` 1, ``max_tokens``
  ``--echo-max-tokens``, ``add_special_tokens: false``); mapping and offsets in
  :mod:`~genderscope.backends.openai.echo`.  S = the start token, so that ln p(x_t | S, x_<t) equals
  ``hf-causal``'s (which prepends BOS, else EOS).
* ``loglikelihood`` {context, continuations}: with ``--multi-prompt`` (``auto``: when a two-prompt echo
  works at start-up, as on vLLM; llama-cpp-python's server takes one prompt) whole jobs packed into
  requests of up to ``--prompts-per-request`` prompts, ``prompt`` a list (one choice each) and
  ``logprobs`` 0; else one echo per continuation.  Same numbers either way.
* ``tokenize``: ``POST /tokenize`` (vLLM, at the server root) with ``return_token_strs``; ``lookup``
  strings are looked up one ``/tokenize`` each (a string that is one token of that spelling, else None).
* ``chat``: ``POST /v1/chat/completions``, as ``openai:``.
* ``generate``: a plain ``/v1/completions`` (no echo) with the payload's sampling settings and seed.

**The start token** (``--start-token``): ``auto`` asks ``/tokenize`` for the ids of ``""`` with special
tokens; a tokenizer that adds a BOS gives it (its string from ``token_strs``, else ``/detokenize``).  For
a tokenizer that adds none (GPT-2, SmolLM2, Qwen) ``auto`` reads ``bos_token``, else ``eos_token``, from
the server's ``GET /tokenizer_info`` (vLLM with ``--enable-tokenizer-info-endpoint``), as ``hf-causal``
chooses; a server without it stops the run with a message naming ``--start-token TOKEN``, the vLLM flag
and ``--start-token none`` (the first token stays unscored).  A given token must
be one token on the server.  Once per backend, before the first likelihood request: the echo probe of
:mod:`~genderscope.backends.openai.probe` (refuses servers without echoed, self-consistent prompt
log-probs unless ``--trust-echo``) and one echo of ``S + "The nurse said that she"`` whose first token
must be S, once.  A run answered from the store sends nothing.

Fingerprint: ``openai-completions:MODEL|start=<option>`` (+ ``#MODEL_ID``): not the URL.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from genderscope.backends.openai import echo as echo
from genderscope.backends.continuations import continuation_sum, split_context
from genderscope.backends.openai.batch import (
    BatchFileMixin,
    BatchHTTPOptions,
    BatchRoute,
    make_route,
    merge_stats,
)
from genderscope.backends.openai.chat import chat_body, chat_content, model_fingerprint
from genderscope.backends.openai.http import FleetClient, ServerUnreachable
from genderscope.core.backend import Backend, Emit, handles
from genderscope.common.errors import BackendError, UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import CHAT, GENERATE, LOGLIKELIHOOD, TOKEN_LOGPROBS, TOKENIZE
from genderscope.core.requests import SEED_LIMIT, Job, Outcome

CHECK_TEXT = "The nurse said that she"


@dataclass
class CompletionsOptions(BatchHTTPOptions):
    start_token: str = opt(
        "auto",
        "token scored texts start from, as hf-causal's BOS, else EOS: auto (the BOS the server's "
        "tokenizer adds), a token string such as '<|endoftext|>', or none (first token unscored)",
    )
    echo_max_tokens: int = opt(1, "max_tokens sent with echo requests (0 or 1; some servers refuse 0)")
    trust_echo: bool = opt(False, "use echoed log-probs even when the start-up probe finds them inconsistent")
    send_seed: bool = opt(True, "chat: send a seed in [0, 2^31) derived from (request, trial)")
    multi_prompt: str = opt(
        "auto",
        "loglikelihood: send a context's continuations as one request with a list of prompts (vLLM): "
        "auto (when the server answers a two-prompt echo at start-up; llama-cpp-python's takes one), "
        "on, off (one request per continuation)",
        ("auto", "on", "off"),
    )
    prompts_per_request: int = opt(
        64, "loglikelihood with --multi-prompt: prompts per request (whole contexts, at least one)", minimum=1
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.prompts_per_request < 1:
            raise ValueError("--prompts-per-request must be at least 1")
        if self.echo_max_tokens not in (0, 1):
            raise ValueError("--echo-max-tokens must be 0 or 1")
        if not self.start_token:
            raise ValueError("--start-token must be auto, none or a token string")


class OpenAICompletionsBackend(BatchFileMixin, Backend):
    kind = "openai-completions"
    description = (
        "OpenAI-compatible /v1/completions with echoed prompt log-probs, e.g. vLLM "
        "(openai-completions:MODEL; --base-url URL[,URL...])"
    )
    Options = CompletionsOptions

    def __init__(self, target: str, options: CompletionsOptions, offline: bool = False):
        super().__init__(target, options)
        self.http = FleetClient(options, f"model {target!r}", offline)
        self.start: str | None = None  # resolved start token string ("" = none)
        self.start_id: int | None = None
        self.probe: dict[str, Any] | None = None
        self._ready = False
        self._store: Any = None
        self._batch: BatchRoute | None = None
        self.multi = options.multi_prompt == "on"  # continuations as one list of prompts

    @property
    def fingerprint(self) -> str:
        target = f"{self.target}|start={self.options.start_token}"
        return model_fingerprint(self.kind, target, self.options.model_id)

    def describe(self) -> dict[str, Any]:
        return self.http.describe(super().describe())

    def stats(self) -> dict[str, Any]:
        out = self.http.stats()
        if self.start is not None:
            out["start_token"] = self.start or None
        if self.probe is not None:
            out["echo_probe"] = self.probe
            out["multi_prompt"] = self.multi
        return merge_stats(out, self._batch)

    def bind_store(self, store: Any) -> None:
        self._store = store

    # -- start-up ------------------------------------------------------------------------------
    def _tokenize(self, text: str, special: bool) -> tuple[list[int], list[str] | None]:
        body = {"prompt": text, "add_special_tokens": special, "return_token_strs": True}
        return self.http.call("/tokenize", {"model": self.target, **body}, echo.tokenize_ids)

    def _resolve_start(self) -> None:
        opt_ = self.options.start_token
        if opt_.lower() == "none":
            self.start = ""
            return
        if opt_.lower() != "auto":
            try:
                ids, _strs = self._tokenize(opt_, False)
            except ServerUnreachable:
                raise
            except BackendError:
                ids = None  # no /tokenize: the echo check below still checks it
            if ids is not None and len(ids) != 1:
                raise UsageError(f"--start-token {opt_!r} is {len(ids)} tokens on the server, not one")
            self.start, self.start_id = opt_, (ids[0] if ids else None)
            return
        try:
            ids, strs = self._tokenize("", True)
        except ServerUnreachable:
            raise  # the server, not its /tokenize, is what to fix
        except BackendError as exc:
            raise BackendError(
                f"--start-token auto needs the server's /tokenize (vLLM has it): {exc}; "
                "pass --start-token TOKEN (the model's BOS, else EOS) or --start-token none"
            ) from None
        if not ids:
            self.start, self.start_id = self._start_from_tokenizer_info()
            return
        if strs is None:
            strs = [self.http.call("/detokenize", {"model": self.target, "tokens": ids[:1]})["prompt"]]
        self.start, self.start_id = strs[0], ids[0]
        self.adds_bos = True  # the tokenizer puts it in front of every input (lm-eval's contexts get it)

    def _start_from_tokenizer_info(self) -> tuple[str, int | None]:
        """The start token of a tokenizer that adds none: hf-causal's rule (its BOS, else its EOS) applied
        to the tokenizer configuration the server publishes (vLLM: ``GET /tokenizer_info``, served with
        ``--enable-tokenizer-info-endpoint``); a UsageError naming the flag to pass when it publishes none."""
        info = self.http.get("/tokenizer_info")
        token = echo.start_token_of(info) if isinstance(info, dict) else None
        if token is None:
            guess = ""
            if isinstance(info, dict):
                guess = "; the server's tokenizer has neither a bos_token nor an eos_token"
            raise UsageError(
                f"the tokenizer of {self.target!r} adds no BOS and the server does not publish its "
                f"tokenizer configuration{guess}: pass --start-token TOKEN (the model's BOS, else EOS, as "
                "hf-causal uses: bos_token/eos_token in tokenizer_config.json, e.g. --start-token "
                "'<|endoftext|>'), start vLLM with --enable-tokenizer-info-endpoint so that auto can read "
                "it, or pass --start-token none (the first token of each text stays unscored)"
            )
        ids, _strs = self._tokenize(token, False)
        if len(ids) != 1:
            raise UsageError(f"the server's start token {token!r} is {len(ids)} tokens, not one: pass "
                             "--start-token TOKEN")
        return token, ids[0]

    def ready(self) -> None:
        """Resolve the start token and probe the server once (before the first likelihood request)."""
        if self._ready:
            return
        with self.http.startup():  # the start-up calls share one event loop and session
            self._ready_calls()
        self._ready = True

    def _ready_calls(self) -> None:
        from genderscope.backends.openai.probe import probe_echo_logprobs

        self._resolve_start()
        start = self.start or ""
        result = probe_echo_logprobs(
            lambda path, body: self.http.call("/v1" + path, body),
            self.target,
            trust_echo=self.options.trust_echo,
            start=start,  # ask exactly as the scoring requests do
            extra={"add_special_tokens": False},
        )
        self.probe = result.as_dict()
        raw = self.http.call("/v1/completions", json.loads(self._echo(start + CHECK_TEXT)), lambda r: r)
        try:  # the mapping must work on this server
            echo.token_logprobs_from_echo(raw, CHECK_TEXT, start)
        except ValueError as exc:
            raise BackendError(f"the echo of {start + CHECK_TEXT!r} cannot be read: {exc}") from None
        toks = json.loads(raw)["choices"][0]["logprobs"]["tokens"]
        if start and (
            toks[0].strip() != start.strip() or (len(toks) > 1 and toks[1].strip() == start.strip())
        ):
            raise BackendError(
                f"the echo of {start + CHECK_TEXT!r} begins {toks[:2]!r}, not the start token {start!r} "
                "once: the server must echo the start token (llama-cpp-python drops it), honour "
                "add_special_tokens=false (vLLM does) and know the start token; see docs/servers.md"
            )
        if self.options.multi_prompt == "auto":
            single = echo.token_logprobs_from_echo(raw, CHECK_TEXT, start)
            self.multi = self._multi_prompt_works(start, single)

    def _multi_prompt_works(self, start: str, single: Any) -> bool:
        """Whether one echo of two prompts gives each its own choice, the first as its single echo (asked
        once, without retries: llama-cpp-python's server answers a list of prompts with HTTP 500)."""
        ctx, conts = "The", [CHECK_TEXT[3:], CHECK_TEXT.rsplit(" ", 1)[0][3:]]  # scored after "The"
        try:
            body = self._echo_many([start + ctx + c for c in conts])
            raw = self.http.call("/v1/completions", json.loads(body), lambda r: r, retries=0)
            choices = echo.echo_choices(raw, 2, self.options.echo_max_tokens)
            got = echo.continuation_sums(choices, ctx, conts, start)
        except (BackendError, ValueError):
            return False
        want = continuation_sum(single, len(ctx))
        return got[0][1] == want[1] and got[0][0] is not None and abs(got[0][0] - want[0]) < 1e-3

    # -- answering -----------------------------------------------------------------------------
    def _echo(self, prompt: str | list[str]) -> bytes:
        return echo.echo_body(self.target, prompt, self.options.echo_max_tokens)

    def _echo_many(self, prompts: list[str]) -> bytes:
        """One echo of several prompts (vLLM), asking for no top log-probs beyond each token's own."""
        return echo.echo_body(self.target, prompts, self.options.echo_max_tokens, top=0)

    def _generate_body(self, job: Job) -> bytes:
        """A plain completion of a ``generate`` job: its prompt, length, sampling settings and seed."""
        p = job.request.payload
        body = {
            "model": self.target,
            "prompt": p["prompt"],
            "max_tokens": p["max_tokens"],
            "seed": p["seed"] % SEED_LIMIT,
        }
        body["temperature"], body["top_p"] = p.get("temperature", 1.0), p.get("top_p", 1.0)
        return json.dumps(body, ensure_ascii=False).encode()

    # -- the batch route (--batch, `genderscope batch write/read`) ------------------------------------
    def _batch_start(self) -> str:
        """The start token on the batch route: the option itself (no server to resolve ``auto``)."""
        opt_ = self.options.start_token
        if opt_.lower() == "auto":
            raise UsageError(
                "token_logprobs requests on the batch route need --start-token TOKEN (the model's BOS, "
                "else EOS, e.g. '<|endoftext|>') or --start-token none: `auto` asks a live server"
            )
        return "" if opt_.lower() == "none" else opt_

    def batch_request(self, job: Job) -> tuple[str, bytes] | None:
        """(path, body) of a job on the batch route, exactly as the online route posts it; None for
        ``tokenize`` (no batch endpoint)."""
        kind = job.request.kind
        if kind == TOKEN_LOGPROBS:
            return "/v1/completions", self._echo(self._batch_start() + job.request.payload["text"])
        if kind == CHAT:
            return "/v1/chat/completions", chat_body(self.target, job, self.options.send_seed)
        if kind == GENERATE:
            return "/v1/completions", self._generate_body(job)
        return None

    def batch_parse(self, job: Job, body: bytes) -> Any:
        """The response of a job from its batch result body (as the online route reads it)."""
        p, kind = job.request.payload, job.request.kind
        if kind == TOKEN_LOGPROBS:
            return echo.token_logprobs_from_echo(body, p["text"], self._batch_start())
        if kind == CHAT:
            return chat_content(body)
        return echo.generate_response(body, p["max_tokens"])

    def _batched(self, jobs: list[Job], emit: Emit) -> bool:
        """On the batch route (``--batch``): answer ``jobs`` there and say so."""
        if not self.options.batch:
            return False
        if self._batch is None:
            self._batch = make_route(self, self._store, self.batch_request, self.batch_parse)
        self._batch.answer(jobs, emit)
        return True

    async def _lookup(self, word: str) -> int | None:
        body = {"model": self.target, "prompt": word, "add_special_tokens": False, "return_token_strs": True}
        ids, strs = await self.http.post("/tokenize", json.dumps(body).encode(), echo.tokenize_ids)
        return ids[0] if len(ids) == 1 and (strs is None or strs[0] == word) else None

    @handles(TOKEN_LOGPROBS)
    def _token_logprobs_jobs(self, jobs: list[Job], emit: Emit) -> None:
        if self._batched(jobs, emit):
            return

        async def echo_logprobs(job: Job) -> Any:
            start, text = self.start or "", job.request.payload["text"]
            return await self.http.post(
                "/v1/completions",
                self._echo(start + text),
                lambda raw: echo.token_logprobs_from_echo(raw, text, start),
            )

        self.http.run(jobs, echo_logprobs, emit)

    @handles(LOGLIKELIHOOD)
    def _loglikelihood_jobs(self, jobs: list[Job], emit: Emit) -> None:
        """With ``--multi-prompt`` (vLLM): :meth:`_loglikelihood_together`.  Else one echo of ``context +
        continuation`` per continuation, sent together (a server with prefix caching, e.g. vLLM, computes
        the shared context once); the continuation's tokens are those ending
        after the context (lm-eval's split: the context's trailing whitespace belongs to the continuation).
        An empty context is scored after the start token; a non-empty one starts with it only when the
        server's tokenizer adds it to every input (lm-eval encodes contexts with the tokenizer's default
        special tokens)."""

        async def one(context: str, cont: str) -> tuple[float, int]:
            start = (self.start or "") if not context or getattr(self, "adds_bos", False) else ""
            text = context + cont
            got = await self.http.post(
                "/v1/completions",
                self._echo(start + text),
                lambda raw: echo.token_logprobs_from_echo(raw, text, start),
            )
            return continuation_sum(got, len(context))

        async def loglik(job: Job) -> Any:
            import asyncio

            p = job.request.payload
            ctx, conts = split_context(p["context"], p["continuations"])
            got = await asyncio.gather(*(one(ctx, c) for c in conts))
            return {"logprobs": [g[0] for g in got], "n_tokens": [g[1] for g in got], "greedy": []}

        if self.multi:
            self._loglikelihood_together(jobs, emit)
        else:
            self.http.run(jobs, loglik, emit)

    def _loglikelihood_together(self, jobs: list[Job], emit: Emit) -> None:
        """``loglikelihood`` jobs packed into requests of up to ``--prompts-per-request`` prompts (whole
        jobs, in order), one list of prompts each; the answer is read without decoding ``top_logprobs``
        and each context's tokens are walked once (``openai_echo.group_sums``)."""
        groups: list[list[tuple[Job, str, list[str], str]]] = [[]]
        size, adds_bos = 0, getattr(self, "adds_bos", False)
        for job in jobs:
            ctx, conts = split_context(job.request.payload["context"], job.request.payload["continuations"])
            if groups[-1] and size + len(conts) > self.options.prompts_per_request:
                groups.append([])
                size = 0
            start = (self.start or "") if not ctx or adds_bos else ""
            groups[-1].append((job, ctx, conts, start))
            size += len(conts)
        gen = self.options.echo_max_tokens

        def parse(group: list[tuple[Job, str, list[str], str]], raw: bytes) -> list[Any]:
            return echo.group_sums(raw, [(ctx, conts, start) for _job, ctx, conts, start in group], gen)

        async def ask(group: Any) -> Any:
            prompts = [start + ctx + c for _job, ctx, conts, start in group for c in conts]
            body = self._echo_many(prompts)
            return await self.http.post("/v1/completions", body, lambda r: parse(group, r))

        def fan_out(group: Any, out: Outcome) -> None:
            self.http.counts["answers" if out.ok else "failed"] += len(group) - 1  # counted once per group
            for i, (job, _ctx, _conts, _start) in enumerate(group):
                if not out.ok:
                    emit(job, out)
                    continue
                got = out.response[i]
                if any(g[0] is None for g in got):
                    emit(job, Outcome(error="the continuation's first token has no log-probability (no start "
                                            "token): pass --start-token TOKEN"))
                    continue
                emit(job, Outcome(response={"logprobs": [g[0] for g in got], "n_tokens": [g[1] for g in got],
                                            "greedy": []}))

        self.http.run([g for g in groups if g], ask, fan_out)  # type: ignore[arg-type]

    @handles(CHAT)
    def _chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
        if self._batched(jobs, emit):
            return

        async def chat(job: Job) -> Any:
            body = chat_body(self.target, job, self.options.send_seed)
            return await self.http.post("/v1/chat/completions", body, chat_content)

        self.http.run(jobs, chat, emit)

    @handles(GENERATE)
    def _generate_jobs(self, jobs: list[Job], emit: Emit) -> None:
        if self._batched(jobs, emit):
            return

        async def generate(job: Job) -> Any:
            max_tokens = job.request.payload["max_tokens"]
            return await self.http.post(
                "/v1/completions",
                self._generate_body(job),
                lambda raw: echo.generate_response(raw, max_tokens),
            )

        self.http.run(jobs, generate, emit)

    @handles(TOKENIZE)
    def _tokenize_jobs(self, jobs: list[Job], emit: Emit) -> None:
        async def tokenize(job: Job) -> Any:
            p = job.request.payload
            body = {
                "model": self.target,
                "prompt": p["text"],
                "add_special_tokens": bool(p.get("add_special_tokens", False)),
                "return_token_strs": True,
            }
            ids, strs = await self.http.post("/tokenize", json.dumps(body).encode(), echo.tokenize_ids)
            if strs is None:
                raise BackendError(
                    "the server's /tokenize gives no token_strs (return_token_strs); vLLM does"
                )
            lookup = [await self._lookup(w) for w in p.get("lookup", [])]
            return echo.tokenize_response(ids, strs, self.start or "", self.start_id, lookup)

        self.http.run(jobs, tokenize, emit)

    def prepare(self, kinds: frozenset[str]) -> None:
        # the batch route sends token_logprobs without a server to probe; tokenize is always online
        if kinds & ({TOKENIZE} if self.options.batch else {TOKEN_LOGPROBS, TOKENIZE, LOGLIKELIHOOD}):
            self.ready()

