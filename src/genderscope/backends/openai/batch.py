"""The batch route of ``openai:`` and ``openai-completions:`` (``--batch``): the OpenAI Batch API.

Every job the store lacks becomes one line of the batch JSONL, ``{"custom_id": <store key>, "method":
"POST", "url": <the online route's path>, "body": <exactly the online route's body>}``.  Lines are split
into files of at most ``--batch-max-requests`` lines and ``--batch-max-bytes`` bytes, one endpoint URL per
file; each file is uploaded (``POST /files``, purpose ``batch``), a batch created (``POST /batches``,
``completion_window`` ``--batch-window``) and polled every ``--batch-poll`` seconds (``GET
/batches/ID``) with a progress line from its ``request_counts``.  When it ends, its output and error files
are read and every answer is handed to the runner (which stores it) as it is read.

Resume: the ledger (:mod:`genderscope.core.batch_ledger`) records a batch's keys before the upload, its
file id and batch id the moment they exist; a restarted run attaches to the open batches whose keys it
still needs (a file uploaded but not yet a batch is submitted, not uploaded again).

Lines that failed (an error file line with a retryable status, or not run before the batch expired) go
into one follow-up batch per round, at most ``--batch-retries`` rounds; then they fail like any failed
request.  A batch the provider refuses (status ``failed``: the file did not validate) stops the run with
its first errors.  A cancelled batch keeps what it finished; its other lines fail (a rerun sends them).

The same line format is read and written for other runners (vLLM's ``run-batch``):
:func:`batch_line`, :func:`read_results`.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from genderscope.backends.openai.http import (
    DEFAULT_BASE_URL,
    RETRYABLE_STATUS,
    HTTPOptions,
    backoff_delay,
    count_usage,
    error_message,
    public_url,
    split_base_urls,
)
from genderscope.core.backend import Emit
from genderscope.common.errors import BackendError, UsageError
from genderscope.core.options import opt
from genderscope.core.requests import Job, Outcome, store_key

MAX_REQUESTS = 50_000  # OpenAI: lines per batch file
MAX_BYTES = 200_000_000  # OpenAI: bytes per batch file
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass
class BatchHTTPOptions(HTTPOptions):
    batch: bool = opt(
        False,
        "send the requests as OpenAI Batch API jobs (about half the price; results within --batch-window)",
    )
    batch_max_requests: int = opt(
        MAX_REQUESTS, "--batch: lines per batch file (the provider's limit: 50,000)"
    )
    batch_max_bytes: int = opt(MAX_BYTES, "--batch: bytes per batch file (the provider's limit: 200 MB)")
    batch_poll: float = opt(30.0, "--batch: seconds between status checks of a batch")
    batch_retries: int = opt(1, "--batch: follow-up batches for lines that failed or expired")
    batch_window: str = opt("24h", "--batch: completion_window sent with each batch")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.batch_max_requests < 1 or self.batch_max_bytes < 1024:
            raise ValueError("--batch-max-requests must be at least 1 and --batch-max-bytes at least 1024")
        if self.batch_poll < 0 or self.batch_retries < 0:
            raise ValueError("--batch-poll and --batch-retries must be 0 or more")


# -- the JSONL line formats ------------------------------------------------------------------------
def batch_line(custom_id: str, url: str, body: bytes) -> bytes:
    """One request line (newline-terminated); ``body`` is the online route's JSON body, spliced as is."""
    return b'{"custom_id":"%s","method":"POST","url":"%s","body":%s}\n' % (
        custom_id.encode(),
        url.encode(),
        body,
    )


@dataclass
class ResultLine:
    """One line of an output or error file: the answer ``body`` (JSON bytes) when ``status`` is 200 and
    ``error`` is None, else what went wrong."""

    custom_id: str
    status: int | None
    body: bytes | None
    error: str | None
    code: str | None = None  # the error object's code, e.g. "batch_expired"

    @property
    def ok(self) -> bool:
        return self.error is None and self.status == 200 and self.body is not None

    @property
    def retryable(self) -> bool:
        """Whether sending the line again may help (expired, rate-limited, server error, no status)."""
        if self.code == "batch_expired" or self.status is None:
            return True
        return self.status >= 500 or self.status in RETRYABLE_STATUS


def parse_result_line(raw: bytes, where: str) -> ResultLine:
    """A :class:`ResultLine` from one JSON line of an OpenAI / vLLM output or error file; ValueError
    naming ``where`` (file:line) and the field when the line is not one."""
    try:
        obj = json.loads(raw)
    except UnicodeDecodeError as exc:
        byte = f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"
        raise ValueError(f"{where}: not UTF-8 text ({byte})") from None
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{where}: not JSON ({exc})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("custom_id"), str):
        raise ValueError(f"{where}: no custom_id (a batch output line has id, custom_id, response, error)")
    cid = obj["custom_id"]
    resp, err = obj.get("response"), obj.get("error")
    status = body = None
    if isinstance(resp, dict):
        status = resp.get("status_code") if isinstance(resp.get("status_code"), int) else None
        if resp.get("body") is not None:
            body = json.dumps(resp["body"], ensure_ascii=False).encode()
    elif resp is not None:
        raise ValueError(f"{where}: response is a {type(resp).__name__}, not an object")
    message = code = None
    if isinstance(err, dict) and isinstance(err.get("error"), dict):  # vLLM: an ErrorResponse object
        err = err["error"]
    if isinstance(err, str) and err:  # vLLM: a plain message (e.g. an endpoint run-batch does not run)
        message = err
    elif err:
        code = err.get("code") if isinstance(err, dict) else None
        message = (err.get("message") if isinstance(err, dict) else None) or json.dumps(err)
        code = code if isinstance(code, str) else None
    elif status != 200:
        message = f"HTTP {status}: {error_message(body or b'')}" if status else "no response"
    return ResultLine(cid, status, body, message, code)


def read_results(fh: IO[bytes], name: str) -> Iterator[ResultLine]:
    """The result lines of an output / error file (blank lines skipped)."""
    for n, raw in enumerate(fh, 1):
        if raw.strip():
            yield parse_result_line(raw, f"{name}:{n}")


# -- the Files and Batches endpoints ---------------------------------------------------------------
class BatchAPI:
    """Blocking calls to ``/files`` and ``/batches`` under one API root, retried on 429, 5xx and
    connection errors (``--max-retries``, full-jitter backoff)."""

    def __init__(self, options: HTTPOptions, key: str, loopback: bool):
        o = options
        self.root = split_base_urls(o.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)[0]
        self.options = o
        self._key = key
        handlers = [urllib.request.ProxyHandler({})] if loopback else []
        self._open = urllib.request.build_opener(*handlers).open
        self._rng = random.Random()
        self.calls: Counter[str] = Counter()

    @property
    def endpoint(self) -> str:
        return public_url(self.root)

    def _request(self, method: str, path: str, data: bytes | None = None, ctype: str = "") -> bytes:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        if ctype:
            headers["Content-Type"] = ctype
        o, reason = self.options, ""
        for attempt in range(o.max_retries + 1):
            req = urllib.request.Request(self.root + path, data=data, method=method, headers=headers)
            self.calls[f"{method} {path.split('/')[1]}"] += 1
            try:
                with self._open(req, timeout=max(o.timeout, 60.0)) as resp:
                    return resp.read()
            except urllib.error.HTTPError as exc:
                raw = exc.read()
                if exc.code < 500 and exc.code not in RETRYABLE_STATUS:
                    msg = error_message(raw).replace(self._key, "***") if self._key else error_message(raw)
                    raise BackendError(
                        f"{self.endpoint}{path} answered HTTP {exc.code}: {msg} (the batch route needs an "
                        "API with /files and /batches, e.g. OpenAI's; vLLM's server has none: use "
                        "`genderscope batch write` and `vllm run-batch`)"
                    ) from None
                reason = f"HTTP {exc.code}: {error_message(raw)}"
            except (urllib.error.URLError, OSError) as exc:
                reason = f"connection error ({exc})"
            if attempt < o.max_retries:
                time.sleep(backoff_delay(attempt, o.backoff_base, o.backoff_max, self._rng))
        raise BackendError(f"{self.endpoint}{path}: {reason} (gave up after {o.max_retries + 1} attempts)")

    def _json(self, method: str, path: str, obj: Any = None) -> dict[str, Any]:
        data = json.dumps(obj).encode() if obj is not None else None
        raw = self._request(method, path, data, "application/json" if data is not None else "")
        try:
            out = json.loads(raw)
        except ValueError:
            raise BackendError(f"{self.endpoint}{path} answered something that is not JSON") from None
        if not isinstance(out, dict):
            raise BackendError(f"{self.endpoint}{path} answered a {type(out).__name__}, not an object")
        return out

    def upload(self, content: bytes, filename: str) -> str:
        """Upload a batch input file (multipart, purpose ``batch``); its file id."""
        boundary = uuid.uuid4().hex
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            "Content-Type: application/jsonl\r\n\r\n"
        ).encode()
        data = head + content + f"\r\n--{boundary}--\r\n".encode()
        raw = self._request("POST", "/files", data, f"multipart/form-data; boundary={boundary}")
        try:
            return str(json.loads(raw)["id"])
        except (ValueError, KeyError, TypeError):
            raise BackendError(f"{self.endpoint}/files answered no file id") from None

    def create(self, file_id: str, url: str, window: str, metadata: dict[str, str]) -> dict[str, Any]:
        body = {"input_file_id": file_id, "endpoint": url, "completion_window": window, "metadata": metadata}
        return self._json("POST", "/batches", body)

    def retrieve(self, batch_id: str) -> dict[str, Any]:
        return self._json("GET", f"/batches/{batch_id}")

    def cancel(self, batch_id: str) -> dict[str, Any]:
        return self._json("POST", f"/batches/{batch_id}/cancel")

    def download(self, file_id: str) -> bytes:
        return self._request("GET", f"/files/{file_id}/content")


# -- the route ------------------------------------------------------------------------------------
#: (url, JSON body) of a job on the batch route, or None when the job's kind has no batch endpoint
BatchRequest = Callable[[Job], "tuple[str, bytes] | None"]
#: the response of a job from its answer body (ValueError if the body is not one)
BatchParse = Callable[[Job, bytes], Any]


@dataclass
class _Failure:
    job: Job
    error: str
    retry: bool


@dataclass
class BatchStats:
    """What the batch route did, for ``run.json``."""

    batches: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0
    answers: int = 0
    failed: int = 0
    follow_ups: int = 0
    uploads: int = 0
    attached: int = 0
    tokens: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {
            "route": "batch",
            "batch_ids": [b["batch_id"] for b in self.batches],
            "batches": self.batches,
            "batch_lines": self.lines,
            "batch_answers": self.answers,
            "batch_failed_jobs": self.failed,
            "follow_up_batches": self.follow_ups,
            "uploads": self.uploads,
            "attached": self.attached,
            "tokens": dict(self.tokens),
        }


class BatchRoute:
    """Answers jobs through batch jobs (see the module docstring); ``request``/``parse`` come from the
    backend, so a line's body is exactly what the online route would POST."""

    def __init__(
        self,
        options: BatchHTTPOptions,
        api: BatchAPI,
        ledger: Any,
        fingerprint: str,
        request: BatchRequest,
        parse: BatchParse,
        log: Callable[[str], None] | None = None,
    ):
        self.o, self.api, self.ledger, self.fp = options, api, ledger, fingerprint
        self.request, self.parse = request, parse
        self.log = log or _stderr_line
        self.stats = BatchStats()

    def answer(self, jobs: Sequence[Job], emit: Emit) -> None:
        """Answer ``jobs`` (all of a batchable kind) through batches, attaching to open ones first."""
        by_key = {store_key(self.fp, j.request, j.trial): j for j in jobs}
        pending = dict(by_key)
        wave = []
        for rec in self.ledger.open_batches(self.fp, self.api.endpoint):
            mine = [k for k in rec.keys if k in pending]
            if not mine:
                continue
            if rec.state == "new":  # killed before the upload finished: send those lines again
                self.ledger.update(rec, state="abandoned")
                continue
            for k in mine:
                del pending[k]
            self.stats.attached += 1
            self.stats.lines += len(mine)
            self.log(
                f"batch: attaching to {rec.batch_id or rec.file_id} ({len(mine)} of its lines still needed)"
            )
            wave.append(rec)
        wave += self._submit(list(pending.values()), 0)
        while wave:
            failures = self._collect(wave, by_key, emit)
            again: dict[int, list[Job]] = {}
            for rnd, f in failures:
                if f.retry and rnd < self.o.batch_retries:
                    again.setdefault(rnd + 1, []).append(f.job)
                else:
                    self.stats.failed += 1
                    emit(f.job, Outcome(error=f.error))
            wave = []
            for rnd, retry_jobs in sorted(again.items()):
                self.log(f"batch: {len(retry_jobs)} failed lines go into follow-up batch round {rnd}")
                self.stats.follow_ups += 1
                wave += self._submit(retry_jobs, rnd)

    # -- submitting ---------------------------------------------------------------------------
    def _submit(self, jobs: Sequence[Job], round_: int) -> list[Any]:
        """Record, upload and create batches for ``jobs`` (split by URL and by the file limits)."""
        files: list[tuple[str, list[str], list[bytes]]] = []
        current: dict[str, tuple[list[str], list[bytes], list[int]]] = {}
        for job in jobs:
            route = self.request(job)
            if route is None:
                raise BackendError(f"a {job.request.kind!r} request has no batch endpoint")
            url, body = route
            key = store_key(self.fp, job.request, job.trial)
            line = batch_line(key, url, body)
            keys, lines, size = current.setdefault(url, ([], [], [0]))
            if keys and (
                len(keys) >= self.o.batch_max_requests or size[0] + len(line) > self.o.batch_max_bytes
            ):
                files.append((url, keys, lines))
                keys, lines, size = current[url] = ([], [], [0])
            if len(line) > self.o.batch_max_bytes:
                raise BackendError(f"one request line is {len(line):,} bytes, over --batch-max-bytes")
            keys.append(key)
            lines.append(line)
            size[0] += len(line)
        files += [(url, keys, lines) for url, (keys, lines, _s) in current.items() if keys]
        records = []
        for url, keys, lines in files:
            rec = self.ledger.add(self.fp, self.api.endpoint, url, round_, keys)
            file_id = self.api.upload(b"".join(lines), f"genderscope-{rec.id}.jsonl")
            self.stats.uploads += 1
            self.ledger.update(rec, state="uploaded", file_id=file_id)
            self.stats.lines += len(keys)
            self._create(rec)
            records.append(rec)
        return records

    def _create(self, rec: Any) -> None:
        meta = {"genderscope": "1", "fingerprint": self.fp[:500]}
        batch = self.api.create(rec.file_id, rec.url, self.o.batch_window, meta)
        bid = batch.get("id")
        if not isinstance(bid, str):
            raise BackendError(f"{self.api.endpoint}/batches answered no batch id")
        self.ledger.update(rec, state="submitted", batch_id=bid)
        self.log(f"batch: submitted {bid} ({len(rec.keys)} requests, {rec.url})")

    # -- collecting ---------------------------------------------------------------------------
    def _collect(self, wave: list[Any], by_key: dict[str, Job], emit: Emit) -> list[tuple[int, _Failure]]:
        """Poll every batch of ``wave`` until it ends and read its files; the failed lines (with the
        round they were in)."""
        failures: list[tuple[int, _Failure]] = []
        open_ = list(wave)
        shown: dict[str, str] = {}
        while open_:
            still = []
            for rec in open_:
                if rec.batch_id is None:  # uploaded before a kill, never created
                    self._create(rec)
                batch = self.api.retrieve(rec.batch_id)
                line = _progress(batch, rec)
                if shown.get(rec.batch_id) != line:
                    shown[rec.batch_id] = line
                    self.log(line)
                if batch.get("status") in TERMINAL:
                    failures += [(rec.round, f) for f in self._finish(rec, batch, by_key, emit)]
                else:
                    still.append(rec)
            open_ = still
            if open_:
                time.sleep(self.o.batch_poll)
        return failures

    def _finish(self, rec: Any, batch: dict[str, Any], by_key: dict[str, Job], emit: Emit) -> list[_Failure]:
        status, bid = batch["status"], rec.batch_id
        self.stats.batches.append(
            {"batch_id": bid, "status": status, "requests": len(rec.keys), "round": rec.round, "url": rec.url}
        )
        if status == "failed":
            self.ledger.update(rec, state="failed")
            raise BackendError(f"batch {bid} was refused: {_batch_errors(batch)}")
        mine = {k for k in rec.keys if k in by_key}
        seen: set[str] = set()
        failures = []
        for fid in (batch.get("output_file_id"), batch.get("error_file_id")):
            if not fid:
                continue
            raw = self.api.download(fid)
            for n, line in enumerate(raw.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    res = parse_result_line(line, f"{fid}:{n}")
                except ValueError as exc:
                    raise BackendError(f"batch {bid}: {exc}") from None
                if res.custom_id not in mine or res.custom_id in seen:
                    continue
                seen.add(res.custom_id)
                f = self._deliver(by_key[res.custom_id], res, emit)
                if f is not None:
                    failures.append(f)
        why = {
            "expired": (f"not run before batch {bid} expired", True),
            "cancelled": (f"batch {bid} was cancelled before this line ran (rerun to send it)", False),
        }.get(status, (f"missing from the output of batch {bid}", True))
        failures += [_Failure(by_key[k], why[0], why[1]) for k in rec.keys if k in mine and k not in seen]
        self.ledger.update(rec, state="done")
        return failures

    def _deliver(self, job: Job, res: ResultLine, emit: Emit) -> _Failure | None:
        """Emit the answer of one result line; a failure when it has none."""
        if not res.ok:
            return _Failure(job, f"batch line failed: {res.error}", res.retryable)
        assert res.body is not None
        try:
            response = self.parse(job, res.body)
        except ValueError as exc:
            return _Failure(job, str(exc), True)
        count_usage(self.stats.tokens, res.body)
        self.stats.answers += 1
        emit(job, Outcome(response=response))
        return None


def merge_stats(online: dict[str, Any], route: "BatchRoute | None") -> dict[str, Any]:
    """A backend's run statistics: the online client's, plus the batch route's when it was used (route
    ``batch``; token counts summed over both)."""
    if route is None:
        return online
    batch = route.stats.to_json()
    tokens = Counter(online.get("tokens") or {})
    tokens.update(batch["tokens"])
    return {**online, **batch, "tokens": dict(tokens)}


def _progress(batch: dict[str, Any], rec: Any) -> str:
    c = batch.get("request_counts") or {}
    total = c.get("total") or len(rec.keys)
    return (
        f"batch {rec.batch_id}: {batch.get('status')}, {c.get('completed', 0):,}/{total:,} done, "
        f"{c.get('failed', 0):,} failed"
    )


def _batch_errors(batch: dict[str, Any]) -> str:
    errs = (batch.get("errors") or {}).get("data") or []
    parts = [
        (f"line {e['line']}: " if e.get("line") is not None else "") + str(e.get("message") or e.get("code"))
        for e in errs[:3]
        if isinstance(e, dict)
    ]
    more = f" (+{len(errs) - 3} more)" if len(errs) > 3 else ""
    return ("; ".join(parts) + more) if parts else "no reason given"


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def make_route(backend: Any, store: Any, request: BatchRequest, parse: BatchParse) -> BatchRoute:
    """The batch route of an OpenAI backend (``backend.http``: its fleet client) over ``store``."""
    from genderscope.core.batch_ledger import BatchLedger

    if store is None:
        raise UsageError("--batch needs the response store (answers arrive later): drop --no-cache")
    http = backend.http
    api = BatchAPI(backend.options, http._key, http.loopback)
    return BatchRoute(backend.options, api, BatchLedger(store), backend.fingerprint, request, parse)


class BatchFileMixin:
    """``write_batch`` / ``read_batch`` / ``batch_outcome`` (:class:`genderscope.core.backend.BatchFiles`)
    for a backend with ``fingerprint``, ``batch_request`` and ``batch_parse``."""

    fingerprint: str
    batch_request: BatchRequest
    batch_parse: BatchParse

    def write_batch(self, jobs: Sequence[Job], fh: IO[bytes]) -> list[str]:
        return write_lines(jobs, self.fingerprint, self.batch_request, fh)

    def read_batch(self, path: Path) -> Iterator[tuple[str, ResultLine]]:
        for res in result_file_lines(path):
            yield res.custom_id, res

    def batch_outcome(self, job: Job, line: ResultLine) -> Outcome:
        if not line.ok:
            return Outcome(error=f"batch line failed: {line.error}")
        try:
            return Outcome(response=self.batch_parse(job, line.body))  # type: ignore[arg-type]
        except ValueError as exc:
            return Outcome(error=str(exc))


def write_lines(jobs: Sequence[Job], fingerprint: str, request: BatchRequest, fh: IO[bytes]) -> list[str]:
    """Write one batch line per job to ``fh``; the keys written (= custom ids).  UsageError for a job
    whose kind has no batch endpoint."""
    keys = []
    for job in jobs:
        route = request(job)
        if route is None:
            raise UsageError(
                f"{job.request.kind!r} requests have no batch endpoint: answer this round online "
                "(`genderscope run` against a server), then write the next round"
            )
        key = store_key(fingerprint, job.request, job.trial)
        fh.write(batch_line(key, route[0], route[1]))
        keys.append(key)
    return keys


def result_file_lines(path: Path) -> Iterator[ResultLine]:
    """The result lines of an output file on disk."""
    with open(path, "rb") as fh:
        yield from read_results(fh, str(path))
