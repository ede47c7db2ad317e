"""The fake server's Files and Batches endpoints (OpenAI's Batch API), strict about the input format.

Routes (under ``/v1``): ``POST /files`` (multipart: ``purpose`` = ``batch``, ``file``), ``GET
/files/ID/content``, ``POST /batches`` (``input_file_id``, ``endpoint``, ``completion_window``), ``GET
/batches/ID``, ``POST /batches/ID/cancel``.

A batch is ``validating`` until its first retrieve, which checks every line: a JSON object with exactly
``custom_id`` (a string, unique in the file), ``method`` ``POST``, ``url`` = the batch's endpoint and
``body`` (an object naming the same ``model`` on every line), at most ``batch_max_requests`` lines and
``batch_max_bytes`` bytes; a file that breaks a rule makes the batch ``failed`` with one error per bad
line (``errors.data``, line numbers from 1).  It then stays ``in_progress`` until it has been retrieved
``batch_polls`` times, and runs: each line is answered as the online route answers it (chat: the fake's
:func:`~genderscope_dev.fake_openai_config.expected_answer`; completions: the completions model).

Faults (``batch_schedule``: the n-th batch created gets the n-th entry): ``fail`` (refused at validation),
``expire`` (the first half of the lines run, the rest are ``batch_expired`` lines of the error file),
``error_lines`` (every third line gets HTTP 500 in the error file), ``bad_request`` (every third line gets
HTTP 400), ``cancel`` (cancelled after the first half ran), ``stall`` (never leaves ``in_progress`` until
the schedule entry is changed via ``configure``).  ``POST /batches/ID/cancel`` cancels a running batch
the same way.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from genderscope_dev.fake_openai_config import chat_completion_body, expected_answer

URLS = ("/v1/chat/completions", "/v1/completions")

Answer = Callable[[str, dict[str, Any]], dict[str, Any]]  # (url, body) -> answer body; ValueError = 400


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    window: str
    fault: str
    metadata: dict[str, Any]
    status: str = "validating"
    polls: int = 0
    created_at: int = field(default_factory=lambda: int(time.time()))
    errors: list[dict[str, Any]] | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "input_file_id": self.input_file_id,
            "completion_window": self.window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "request_counts": {"total": self.total, "completed": self.completed, "failed": self.failed},
            "metadata": self.metadata,
        }


class FakeBatches:
    """Files and batches of one fake server (state lives on the server's event loop thread)."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[str, bytes]] = {}  # id -> (purpose, content)
        self.batches: dict[str, _Batch] = {}
        self.counts: dict[str, int] = {}

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "batches": {
                b.id: {"status": b.status, "fault": b.fault, "total": b.total} for b in self.batches.values()
            },
        }

    # -- routing -------------------------------------------------------------------------------
    def handle(
        self, method: str, route: str, headers: dict[str, str], body: bytes, config: Any, answer: Answer
    ) -> tuple[int, bytes, str]:
        """(status, body, content type) of a Files / Batches request."""
        parts = route.split("/")[2:]  # "", "v1", then "files" or "batches", ...
        try:
            if parts == ["files"] and method == "POST":
                return self._upload(headers, body)
            if len(parts) == 3 and parts[0] == "files" and parts[2] == "content" and method == "GET":
                self._count("downloads")
                if parts[1] not in self.files:
                    return _err(404, f"No such File object: {parts[1]}")
                return 200, self.files[parts[1]][1], "application/jsonl"
            if parts == ["batches"] and method == "POST":
                return self._create(body, config)
            if len(parts) == 2 and parts[0] == "batches" and method == "GET":
                self._count("retrieves")
                b = self.batches.get(parts[1])
                if b is None:
                    return _err(404, f"No such Batch object: {parts[1]}")
                self._advance(b, config, answer)
                return 200, json.dumps(b.to_json()).encode(), "application/json"
            if len(parts) == 3 and parts[0] == "batches" and parts[2] == "cancel" and method == "POST":
                self._count("cancels")
                b = self.batches.get(parts[1])
                if b is None:
                    return _err(404, f"No such Batch object: {parts[1]}")
                if b.status in ("validating", "in_progress"):
                    b.status = "cancelling"
                return 200, json.dumps(b.to_json()).encode(), "application/json"
        except _Refused as exc:
            return _err(400, str(exc))
        return _err(404, f"no route {method} {route}")

    def _upload(self, headers: dict[str, str], body: bytes) -> tuple[int, bytes, str]:
        ctype = headers.get("content-type", "")
        if not ctype.startswith("multipart/form-data"):
            raise _Refused("POST /v1/files takes multipart/form-data (purpose, file)")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {ctype}\r\n\r\n".encode() + body
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
        if fields.get("purpose", (None, b""))[1].decode() != "batch":
            raise _Refused("purpose must be 'batch'")
        if "file" not in fields or not (fields["file"][0] or "").endswith(".jsonl"):
            raise _Refused("the file part must be a .jsonl file")
        fid = f"file-{len(self.files) + 1:06d}"
        self.files[fid] = ("batch", fields["file"][1])
        self._count("uploads")
        out = {
            "id": fid,
            "object": "file",
            "bytes": len(fields["file"][1]),
            "purpose": "batch",
            "filename": fields["file"][0],
        }
        return 200, json.dumps(out).encode(), "application/json"

    def _create(self, body: bytes, config: Any) -> tuple[int, bytes, str]:
        try:
            req = json.loads(body)
        except ValueError:
            raise _Refused("body is not JSON") from None
        fid, url, window = req.get("input_file_id"), req.get("endpoint"), req.get("completion_window")
        if fid not in self.files:
            raise _Refused(f"No such File object: {fid}")
        if url not in URLS:
            raise _Refused(f"endpoint must be one of {', '.join(URLS)}")
        if window != "24h":
            raise _Refused("completion_window must be '24h'")
        n = len(self.batches)
        schedule = list(config.batch_schedule)
        fault = schedule[n] if n < len(schedule) else ""
        b = _Batch(f"batch_{n + 1:06d}", fid, url, window, fault, req.get("metadata") or {})
        self.batches[b.id] = b
        self._count("creates")
        return 200, json.dumps(b.to_json()).encode(), "application/json"

    # -- running -------------------------------------------------------------------------------
    def _advance(self, b: _Batch, config: Any, answer: Answer) -> None:
        b.polls += 1
        schedule = list(config.batch_schedule)
        n = int(b.id.split("_")[1]) - 1
        b.fault = schedule[n] if n < len(schedule) else ""
        if b.status == "validating":
            errors = self._validate(b, config)
            if errors or b.fault == "fail":
                b.status = "failed"
                b.errors = errors or [
                    {
                        "code": "invalid_request",
                        "message": "injected validation failure",
                        "param": None,
                        "line": 1,
                    }
                ]
                return
            b.status = "in_progress"
        if b.status == "cancelling":
            self._run(b, answer, "cancel")
            return
        if b.status != "in_progress" or b.fault == "stall" or b.polls < config.batch_polls:
            return
        self._run(b, answer, b.fault)

    def _validate(self, b: _Batch, config: Any) -> list[dict[str, Any]]:
        content = self.files[b.input_file_id][1]
        errors: list[dict[str, Any]] = []
        seen: set[str] = set()
        models: set[Any] = set()
        raw_lines = content.splitlines()
        if len(raw_lines) > config.batch_max_requests or len(content) > config.batch_max_bytes:
            return [
                {
                    "code": "too_large",
                    "message": f"{len(raw_lines)} requests / {len(content)} bytes is over "
                    f"the limit ({config.batch_max_requests} / {config.batch_max_bytes})",
                    "line": None,
                }
            ]
        for n, raw in enumerate(raw_lines, 1):
            problem = _line_problem(raw, b.endpoint, seen, models)
            if problem:
                errors.append({"code": "invalid_request", "message": problem, "param": None, "line": n})
            else:
                b.lines.append(json.loads(raw))
        if not errors and len(models) > 1:
            errors.append(
                {"code": "mixed_models", "message": "every line must use the same model", "line": None}
            )
        if not raw_lines:
            errors.append({"code": "empty_file", "message": "the file has no requests", "line": None})
        b.total = len(raw_lines)
        return errors

    def _run(self, b: _Batch, answer: Answer, fault: str) -> None:
        out: list[bytes] = []
        err: list[bytes] = []
        half = len(b.lines) // 2
        for i, line in enumerate(b.lines):
            rid = f"batch_req_{b.id}_{i}"
            if fault in ("expire", "cancel") and i >= half:
                if fault == "expire":
                    e = {
                        "code": "batch_expired",
                        "message": "This request could not be executed before the completion window expired.",
                    }
                    err.append(_line(rid, line["custom_id"], None, e))
                    b.failed += 1
                continue
            if fault in ("error_lines", "bad_request") and i % 3 == 2:
                status = 500 if fault == "error_lines" else 400
                body = {
                    "error": {
                        "message": f"injected line error {status}",
                        "type": "server_error",
                        "param": None,
                        "code": None,
                    }
                }
                err.append(
                    _line(rid, line["custom_id"], {"status_code": status, "request_id": rid, "body": body})
                )
                b.failed += 1
                continue
            try:
                got = answer(line["url"], line["body"])
                resp = {"status_code": 200, "request_id": rid, "body": got}
            except ValueError as exc:
                body = {
                    "error": {
                        "message": str(exc),
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                }
                resp = {"status_code": 400, "request_id": rid, "body": body}
            if resp["status_code"] == 200:
                out.append(_line(rid, line["custom_id"], resp))
                b.completed += 1
            else:
                err.append(_line(rid, line["custom_id"], resp))
                b.failed += 1
        if out:
            b.output_file_id = self._store_file(b"".join(out))
        if err:
            b.error_file_id = self._store_file(b"".join(err))
        b.status = {"expire": "expired", "cancel": "cancelled"}.get(fault, "completed")

    def _store_file(self, content: bytes) -> str:
        fid = f"file-{len(self.files) + 1:06d}"
        self.files[fid] = ("batch_output", content)
        return fid


class _Refused(Exception):
    """A request the real API answers with HTTP 400."""


def _err(status: int, message: str) -> tuple[int, bytes, str]:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    return status, json.dumps(body).encode(), "application/json"


def _line(rid: str, custom_id: str, response: Any, error: Any = None) -> bytes:
    return (
        json.dumps({"id": rid, "custom_id": custom_id, "response": response, "error": error}) + "\n"
    ).encode()


def _line_problem(raw: bytes, endpoint: str, seen: set[str], models: set[Any]) -> str | None:
    """What is wrong with one input line (None = valid); adds its custom_id and model to the sets."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return "line is not JSON"
    if not isinstance(obj, dict):
        return "line is not a JSON object"
    extra = set(obj) - {"custom_id", "method", "url", "body"}
    if extra:
        return f"unknown field(s) {sorted(extra)}"
    cid = obj.get("custom_id")
    if not isinstance(cid, str) or not cid:
        return "custom_id is missing or not a string"
    if cid in seen:
        return f"custom_id {cid!r} is not unique"
    seen.add(cid)
    if obj.get("method") != "POST":
        return "method must be POST"
    if obj.get("url") != endpoint:
        return f"url {obj.get('url')!r} differs from the batch's endpoint {endpoint!r}"
    body = obj.get("body")
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "body must be an object with a model"
    models.add(body["model"])
    return None


def run_batch_file(src: str, dst: str, model_dir: str | None = None) -> int:
    """A stand-in for ``vllm run-batch -i SRC -o DST``: answer every line of a batch input file as the
    fake server answers online, in vLLM's output format; each line is checked as the Batch API checks
    it (ValueError naming the line).  Returns the number of lines."""
    from genderscope_dev.fake_openai_completions import completion_body, parse_completion

    model = None
    if model_dir:
        from genderscope_dev.fake_openai_model import EchoModel

        model = EchoModel(model_dir)
    seen: set[str] = set()
    n = 0
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        for n, raw in enumerate(fin, 1):  # noqa: B007 - n is the count afterwards
            url = json.loads(raw).get("url") if raw.strip().startswith(b"{") else None
            problem = _line_problem(raw, url if url in URLS else URLS[0], seen, set())
            if problem:
                raise ValueError(f"{src}:{n}: {problem}")
            line = json.loads(raw)
            body = line["body"]
            if line["url"] == "/v1/chat/completions":
                prompt = body["messages"][-1]["content"]
                got = chat_completion_body(body["model"], expected_answer(prompt, body.get("seed")), prompt)
            else:
                if model is None:
                    raise ValueError(f"{src}:{n}: a /v1/completions line needs --model-dir")
                job = parse_completion(body, model)
                got = completion_body(model, job, model.forward([p[0] for p in job.prompts], job.k or 0))
            resp = {"status_code": 200, "request_id": f"fake-{n}", "body": got}
            fout.write(_line(f"vllm-fake-{n}", line["custom_id"], resp))
    return n


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m genderscope_dev.fake_openai_batch",
        description="Answer a batch input file as the fake server would (a stand-in for vllm run-batch).",
    )
    p.add_argument("-i", "--input-file", required=True)
    p.add_argument("-o", "--output-file", required=True)
    p.add_argument("--model-dir", default=None, help="causal LM directory answering /v1/completions lines")
    a = p.parse_args(argv)
    print(f"{run_batch_file(a.input_file, a.output_file, a.model_dir)} lines answered")


if __name__ == "__main__":
    main()
