"""Run folders as older genderscope versions wrote them (for tests that old folders still read)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def strip_to_v1(src: Path, dst: Path) -> Path:
    """A copy of run folder ``src`` as genderscope wrote it before attempts schema version 2."""
    shutil.copytree(src, dst)
    lines = []
    for line in (src / "attempts.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        del rec["request_kind"], rec["request_sha256"]
        lines.append(json.dumps(rec, ensure_ascii=False))
    (dst / "attempts.jsonl").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    manifest = json.loads((src / "run.json").read_text(encoding="utf-8"))
    del manifest["attempts_schema_version"]
    (dst / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    return dst
