"""``openai:MODEL`` — any OpenAI-compatible chat-completions endpoint, on one server or several.

Servers, key, concurrency (per server), retries, failover and pausing: see
:mod:`~genderscope.backends.openai.http` (shared with ``openai-completions:``).  Each job is one
``POST /v1/chat/completions``; its answer is ``choices[0].message.content`` (a string or null).  A body
that is not a chat completion counts as malformed and is retried.

Fingerprint: ``openai:MODEL`` (+ ``#MODEL_ID`` with ``--model-id``): the server URL is not part of it,
so a run moved to other servers of the same model resumes from the response store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from genderscope.backends.openai.batch import (
    BatchFileMixin,
    BatchHTTPOptions,
    BatchRoute,
    make_route,
    merge_stats,
)
from genderscope.backends.openai.http import (
    FleetClient,
)
from genderscope.core.backend import Backend, Emit, handles
from genderscope.core.options import opt
from genderscope.core.request_value import CHAT
from genderscope.core.requests import Job, request_seed, seed_of


@dataclass
class OpenAIOptions(BatchHTTPOptions):
    send_seed: bool = opt(
        True,
        "send a seed in [0, 2^31) derived from (request, trial), so sampled trials repeat where the server "
        "honours it",
    )
    max_tokens_field: str = opt(
        "max_tokens",
        "name under which the answer-length limit is sent (newer OpenAI "
        "reasoning models want max_completion_tokens)",
        ("max_tokens", "max_completion_tokens"),
    )


#: ``json.dumps(value, ensure_ascii=False)`` with one encoder (json.dumps builds a new one per call when an
#: option differs from its defaults): the same text
_encode_body = json.JSONEncoder(ensure_ascii=False).encode


def chat_content(raw: bytes) -> str | None:
    """``choices[0].message.content`` of a chat-completion body; ValueError if the body is not one."""
    try:
        obj = json.loads(raw)
        content = obj["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        snippet = raw[:120].decode("utf-8", "replace").replace("\n", " ")
        raise ValueError(f"response is not a chat completion: {snippet!r}") from None
    if content is not None and not isinstance(content, str):
        raise ValueError(f"choices[0].message.content is a {type(content).__name__}, not a string")
    return content


#: the payload fields a chat body carries besides ``messages`` (``max_tokens`` possibly renamed)
SENT_FIELDS = ("temperature", "top_p", "stop", "presence_penalty", "frequency_penalty", "max_tokens")

#: how every chat request's canonical text starts (keys sorted: ``kind`` before ``payload``)
_CANONICAL_HEAD = b'{"kind":"chat","payload":{'


def chat_body(model: str, job: Job, send_seed: bool, max_tokens_field: str = "max_tokens") -> bytes:
    """The JSON body of a chat job: the request's sampling parameters + model (+ per-trial seed).

    When every payload field is one a body carries, under its own name, and none is null (every request
    the tasks build), the body reuses the request's canonical text, which already holds them as JSON:
    ``{"model":M,"seed":S,`` + the canonical payload's members + ``}`` (no second encoding of the
    messages; the same JSON value as :func:`built_chat_body`, keys sorted and compact)."""
    p = job.request.payload
    if (
        max_tokens_field == "max_tokens"
        and "messages" in p
        and all(v is not None and (k == "messages" or k in SENT_FIELDS) for k, v in p.items())
    ):
        canonical = job.request.canonical().encode()
        if canonical.startswith(_CANONICAL_HEAD) and canonical.endswith(b"}}"):
            seed = b',"seed":%d' % seed_of(canonical, job.trial) if send_seed else b""
            members = canonical[len(_CANONICAL_HEAD) : -2]
            return b'{"model":' + _encode_body(model).encode() + seed + b"," + members + b"}"
    return built_chat_body(model, job, send_seed, max_tokens_field)


def built_chat_body(model: str, job: Job, send_seed: bool, max_tokens_field: str = "max_tokens") -> bytes:
    """:func:`chat_body` built field by field from the payload (null fields and fields a body does not
    carry left out)."""
    p = job.request.payload
    body: dict[str, Any] = {"model": model, "messages": p["messages"]}
    for name in SENT_FIELDS:
        if p.get(name) is not None:
            body[max_tokens_field if name == "max_tokens" else name] = p[name]
    if send_seed:
        body["seed"] = request_seed(job.request, job.trial)
    return _encode_body(body).encode()


def model_fingerprint(kind: str, target: str, model_id: str) -> str:
    """``kind:target`` (+ ``#model_id``): the model, never the server URL."""
    return f"{kind}:{target}" + (f"#{model_id}" if model_id else "")


class OpenAIChatBackend(BatchFileMixin, Backend):
    kind = "openai"
    description = (
        "OpenAI-compatible chat-completions API (openai:MODEL; --base-url URL[,URL...], $OPENAI_API_KEY)"
    )
    Options = OpenAIOptions

    def __init__(self, target: str, options: OpenAIOptions, offline: bool = False):
        super().__init__(target, options)
        self.http = FleetClient(options, f"model {target!r}", offline)
        self.base_url = self.http.urls[0]
        self._store: Any = None
        self._batch: BatchRoute | None = None

    @property
    def fingerprint(self) -> str:
        return model_fingerprint(self.kind, self.target, self.options.model_id)

    def describe(self) -> dict[str, Any]:
        return self.http.describe(super().describe())

    def stats(self) -> dict[str, Any]:
        return merge_stats(self.http.stats(), self._batch)

    def bind_store(self, store: Any) -> None:
        self._store = store

    def batch_request(self, job: Job) -> tuple[str, bytes] | None:
        """(path, body) of a job on the batch route: the online route's, or None for other kinds."""
        return ("/v1/chat/completions", self.payload(job)) if job.request.kind == CHAT else None

    def batch_parse(self, job: Job, body: bytes) -> str | None:
        """The answer in a batch result body (as the online route reads it)."""
        return chat_content(body)

    def payload(self, job: Job) -> bytes:
        """The JSON body for one job: the request's sampling parameters + model (+ seed)."""
        return chat_body(self.target, job, self.options.send_seed, self.options.max_tokens_field)

    @handles(CHAT)
    def _chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
        if self.options.batch:
            if self._batch is None:
                self._batch = make_route(self, self._store, self.batch_request, self.batch_parse)
            self._batch.answer(jobs, emit)
            return

        async def handle(job: Job) -> str | None:
            return await self.http.post("/v1/chat/completions", self.payload(job), chat_content)

        self.http.run(jobs, handle, emit)
