"""Corpus shards for streaming audits: finding them and reading them document by document.

A shard is one file: plain text (the whole file is one document, exactly as :func:`read_text_file`
reads it), JSON Lines (``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst``: one document per record, its
``text_field``), or Parquet (``.parquet``: one document per row of column ``text_field``). Arguments are
files, folders (walked recursively in sorted path order, README files skipped), globs, or registry corpora
(``ptb:valid``). Documents never span shards, so per-shard counts add up to the whole corpus's.

A malformed shard raises :class:`ShardError` naming the shard and the line (or row).
"""

from __future__ import annotations

import glob
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from genderscope.bordia.text import directory_files, read_text_file, resolve_corpus_paths
from genderscope.common.errors import DataError

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst")
PARQUET_SUFFIXES = (".parquet",)


class ShardError(DataError):
    """A shard that cannot be read: ``shard`` and ``line`` (1-based; row for Parquet, 0 = the file)."""

    def __init__(self, shard: str, line: int, message: str):
        where = f"{shard}:{line}" if line else shard
        super().__init__(f"{where}: {message}")
        self.shard, self.line, self.message = shard, line, message


@dataclass(frozen=True)
class Shard:
    """One shard: its path, its kind (``text``, ``jsonl``, ``parquet``) and its position in the corpus."""

    index: int
    path: str
    kind: str

    @property
    def size(self) -> int:
        return Path(self.path).stat().st_size

    def identity(self) -> dict[str, object]:
        """What a finished shard's partial counts are checked against on resume."""
        st = Path(self.path).stat()
        return {"path": self.path, "kind": self.kind, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def shard_kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return "text"


def resolve_shards(specs: Sequence[str | Path]) -> list[Shard]:
    """Shards of corpus arguments: files, folders, globs (``data/*.jsonl.gz``) and registry corpora."""
    paths: list[Path] = []
    for spec in specs:
        s = str(spec)
        if any(ch in s for ch in "*?[") and not Path(s).exists():
            found = sorted(Path(p) for p in glob.glob(s, recursive=True) if Path(p).is_file())
            if not found:
                raise DataError(f"{s}: the pattern matches no file")
            paths.extend(found)
        elif Path(s).is_dir():
            found = directory_files(Path(s))
            if not found:
                raise DataError(f"{s}: directory holds no corpus files")
            paths.extend(found)
        else:
            paths.extend(resolve_corpus_paths([s]))
    return [Shard(i, str(p), shard_kind(p)) for i, p in enumerate(paths)]


# ------------------------------------------------------------------------------------------------ readers


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _zst_lines(path: str) -> Iterator[bytes]:
    """Lines of a zstd file (frame after frame); a file that ends inside a frame raises EOFError
    (zstandard's stream reader would end silently)."""
    try:
        import zstandard
    except ImportError:
        raise DataError(
            f"{path}: reading .zst needs zstandard (pip install 'genderscope[scale]' or zstandard)"
        ) from None
    dctx = zstandard.ZstdDecompressor()
    dobj, in_frame, pending = dctx.decompressobj(), False, b""
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            while chunk:
                pending += dobj.decompress(chunk)
                in_frame = True
                chunk = b""
                if dobj.eof:
                    chunk, dobj, in_frame = dobj.unused_data, dctx.decompressobj(), False
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line + b"\n"
    if in_frame:
        raise EOFError("the file ends inside a zstd frame")
    if pending:
        yield pending


def _lines(path: str) -> Iterator[bytes]:
    """The lines of a JSONL shard, decompressed (``.gz``, ``.zst``)."""
    low = path.lower()
    if low.endswith(".zst"):
        yield from _zst_lines(path)
        return
    with gzip.open(path, "rb") if low.endswith(".gz") else open(path, "rb") as fh:
        yield from fh


def _record_text(shard: str, lineno: int, raw: bytes, text_field: str) -> str | None:
    """The text of one JSONL line; None for a blank line."""
    if not raw.strip():
        return None
    try:
        rec = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise ShardError(shard, lineno, f"not valid UTF-8 ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        what = exc.msg.removesuffix(" at")  # e.g. "Invalid control character at": the column follows
        raise ShardError(shard, lineno, f"not valid JSON ({what} at column {exc.colno})") from None
    if not isinstance(rec, dict):
        raise ShardError(shard, lineno, f"expected a JSON object with field {text_field!r}")
    text = rec.get(text_field)
    if not isinstance(text, str):
        fields = ", ".join(list(rec)[:8]) or "none"
        what = "lacks" if text_field not in rec else "has a non-string"
        raise ShardError(
            shard, lineno, f"record {what} field {text_field!r} (fields: {fields}); see --text-field"
        )
    return _normalise(text)


def _jsonl_documents(path: str, text_field: str) -> Iterator[tuple[int, str]]:
    lineno = 0
    try:
        for lineno, raw in enumerate(_lines(path), 1):
            text = _record_text(path, lineno, raw, text_field)
            if text is not None:
                yield lineno, text
    except (ShardError, DataError):
        raise
    except (EOFError, OSError, gzip.BadGzipFile) as exc:
        raise ShardError(path, lineno + 1, f"truncated or corrupt file ({exc})") from None
    except Exception as exc:  # zstandard.ZstdError and other decompressor errors
        if type(exc).__name__ == "ZstdError":
            raise ShardError(path, lineno + 1, f"truncated or corrupt file ({exc})") from None
        raise


def _parquet_documents(path: str, text_field: str) -> Iterator[tuple[int, str]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            f"{path}: reading Parquet needs pyarrow (pip install 'genderscope[report]')"
        ) from None
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:
        raise ShardError(path, 0, f"not a readable Parquet file ({exc})") from None
    if text_field not in pf.schema_arrow.names:
        names = ", ".join(pf.schema_arrow.names[:8])
        raise ShardError(path, 0, f"no column {text_field!r} (columns: {names}); see --text-field")
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=4096, columns=[text_field]):
            for value in batch.column(0).to_pylist():
                row += 1
                if not isinstance(value, str):
                    raise ShardError(path, row, f"row has no text in column {text_field!r} ({value!r})")
                yield row, _normalise(value)
    except ShardError:
        raise
    except Exception as exc:
        raise ShardError(path, row + 1, f"truncated or corrupt Parquet data ({exc})") from None


def shard_documents(shard: Shard, text_field: str = "text") -> Iterator[tuple[int, str]]:
    """(line or row number, text) of every document of ``shard``, in file order."""
    if shard.kind == "text":
        try:
            text = read_text_file(Path(shard.path))
        except DataError as exc:
            raise ShardError(shard.path, 0, str(exc).removeprefix(f"{shard.path}: ")) from None
        yield 1, text
    elif shard.kind == "jsonl":
        yield from _jsonl_documents(shard.path, text_field)
    else:
        yield from _parquet_documents(shard.path, text_field)


def tally_tokens(shard: Shard, text_field: str = "text") -> int:
    """Whitespace tokens of the readable documents of a bad shard (bad lines and a truncated tail skipped)."""
    if shard.kind == "text":  # a text shard is one document: a bad one has no readable records
        return 0
    if shard.kind != "jsonl":
        try:
            return sum(len(t.split()) for _, t in shard_documents(shard, text_field))
        except DataError:
            return 0
    total = 0
    try:
        for lineno, raw in enumerate(_lines(shard.path), 1):
            try:
                text = _record_text(shard.path, lineno, raw, text_field)
            except ShardError:
                continue
            total += len(text.split()) if text else 0
    except Exception:  # the truncated tail: what was read counts
        pass
    return total
