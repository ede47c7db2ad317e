"""Reading shards in bounded memory: byte ranges of large files, pieces of long documents.

* A plain-text shard (``.txt``, or any other non-JSONL, non-Parquet file; ``.gz``/``.zst`` compressed
  too) is one document, read in pieces of about ``piece_bytes`` that end at whitespace (so no token spans
  two pieces): strict UTF-8 (the error names the byte offset), ``\\r\\n`` and ``\\r`` read as ``\\n``.
* A JSON Lines shard is read record by record; a record longer than :data:`HUGE_RECORD` bytes is streamed:
  its text field is decoded piece by piece (cut after a literal space), the rest of the record checked
  with ``json.loads`` once the text is replaced by ``""``.
* An uncompressed text or JSONL file larger than ``range_bytes`` is cut into byte ranges (after a ``\\n``
  near each multiple of ``range_bytes``; text without a newline nearby after another whitespace byte) that
  separate workers count; :class:`~genderscope.bordia.counter.SeamJoiner` joins their counts.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import numpy as np

from genderscope.bordia.counter import StreamCounter
from genderscope.bordia.shards import Shard, ShardError, _normalise, _parquet_documents, _record_text
from genderscope.common.errors import DataError

#: a JSONL record longer than this is streamed (its text field decoded in pieces)
HUGE_RECORD = 1 << 26
#: how far past a range's nominal end a newline is looked for before another whitespace byte will do
NEWLINE_REACH = 1 << 20
BLOCK = 1 << 22
_ASCII_WS = b" \t\n\x0b\x0c\x1c\x1d\x1e\x1f"  # whitespace bytes a piece may end after (not \r: \r\n)


def compression(path: str) -> str:
    """``gz``, ``zst`` or ``""`` by the file name."""
    low = path.lower()
    return "gz" if low.endswith(".gz") else "zst" if low.endswith(".zst") else ""


@dataclass(frozen=True)
class Unit:
    """A unit of counting work: byte range ``[start, end)`` (end −1: to the end) of shard ``shard``, the
    ``part``-th of ``parts``."""

    shard: Shard
    part: int = 0
    parts: int = 1
    start: int = 0
    end: int = -1

    @property
    def whole(self) -> bool:
        return self.parts == 1


# ------------------------------------------------------------------------------------------------ bytes


def _zst_blocks(path: str) -> Iterator[bytes]:
    """Decompressed blocks of a zstd file (frame after frame); a file that ends inside a frame raises
    EOFError."""
    try:
        import zstandard
    except ImportError:
        raise DataError(
            f"{path}: reading .zst needs zstandard (pip install 'genderscope[scale]' or zstandard)"
        ) from None
    dctx = zstandard.ZstdDecompressor()
    dobj, in_frame = dctx.decompressobj(), False
    with open(path, "rb") as fh:
        while chunk := fh.read(BLOCK):
            while chunk:
                out = dobj.decompress(chunk)
                in_frame = True
                chunk = b""
                if dobj.eof:
                    chunk, dobj, in_frame = dobj.unused_data, dctx.decompressobj(), False
                if out:
                    yield out
    if in_frame:
        raise EOFError("the file ends inside a zstd frame")


def byte_blocks(path: str, start: int = 0, end: int = -1) -> Iterator[bytes]:
    """The (decompressed) bytes of ``path`` in blocks; a byte range of an uncompressed file."""
    kind = compression(path)
    if kind == "zst":
        yield from _zst_blocks(path)
        return
    if kind == "gz":
        with gzip.open(path, "rb") as gz:
            while block := gz.read(BLOCK):
                yield block
        return
    with open(path, "rb") as fh:
        fh.seek(start)
        left = (end - start) if end >= 0 else -1
        while left:
            block = fh.read(BLOCK if left < 0 else min(BLOCK, left))
            if not block:
                break
            left -= len(block) if left > 0 else 0
            yield block


def _find_cut(fh, target: int, size: int, newline_only: bool) -> int:  # type: ignore[no-untyped-def]
    """The first offset after ``target`` that follows a newline (text: one within :data:`NEWLINE_REACH`,
    else any whitespace byte but ``\\r``); ``size`` if there is none."""
    for allowed in (b"\n",) if newline_only else (b"\n", _ASCII_WS):
        fh.seek(target)
        pos = target
        while pos < size:
            data = fh.read(BLOCK)
            if not data:
                break
            hits = [data.find(bytes([b])) for b in allowed]
            hits = [h for h in hits if h >= 0]
            if hits:
                cut = pos + min(hits) + 1
                if newline_only or allowed != b"\n" or cut - target <= NEWLINE_REACH:
                    return cut
                break
            pos += len(data)
            if allowed == b"\n" and not newline_only and pos - target > NEWLINE_REACH:
                break
    return size


def plan_ranges(shard: Shard, range_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of an uncompressed text or JSONL shard larger than ``range_bytes``
    (else one range, end −1)."""
    size = Path(shard.path).stat().st_size
    if shard.kind not in ("text", "jsonl") or compression(shard.path) or size <= range_bytes:
        return [(0, -1)]
    cuts = [0]
    with open(shard.path, "rb") as fh:
        while cuts[-1] + range_bytes < size:
            cut = _find_cut(fh, cuts[-1] + range_bytes, size, shard.kind == "jsonl")
            if cut >= size:
                break
            cuts.append(cut)
    return list(zip(cuts, cuts[1:] + [size]))


def _previous_byte(path: str, offset: int) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(offset - 1)
        return fh.read(1)


def lines_before(path: str, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of ``path`` (a range's first line number − 1)."""
    n = 0
    for block in byte_blocks(path, 0, offset):
        n += block.count(b"\n")
    return n


# ------------------------------------------------------------------------------------------------ text


class Blocks:
    """Blocks of a byte stream, counting the bytes handed out (``consumed``); the first ``skip`` bytes are
    dropped (a resumed read)."""

    def __init__(self, blocks: Iterator[bytes], skip: int = 0):
        self.blocks, self.skip, self.consumed = blocks, skip, skip

    def __iter__(self) -> Iterator[bytes]:
        left = self.skip
        for block in self.blocks:
            if left:
                if len(block) <= left:
                    left -= len(block)
                    continue
                block, left = block[left:], 0
            self.consumed += len(block)
            yield block


class TextPieces:
    """Pieces of about ``piece_bytes`` that end after a whitespace byte (other than ``\\r``), the last one
    at the end: checked as strict UTF-8 (``ShardError`` with the byte offset, ``offset`` being that of
    the first byte), newlines normalised. ``pending`` (bytes read, not yet cut) and ``offset`` can be read
    between pieces (a checkpoint) and given back to continue."""

    def __init__(self, path: str, blocks: Blocks, offset: int, piece_bytes: int, pending: bytes = b""):
        self.path, self.blocks, self.offset, self.piece_bytes = path, blocks, offset, piece_bytes
        self.pending = bytearray(pending)
        self.exhausted = False

    def __iter__(self) -> Iterator[bytes]:
        for block in self.blocks:
            self.pending += block
            while len(self.pending) >= self.piece_bytes:
                cut = _last_cut(self.pending, self.piece_bytes) or _last_cut(self.pending, len(self.pending))
                if cut <= 0:
                    break  # one token longer than a piece: read on
                piece = bytes(self.pending[:cut])
                del self.pending[:cut]
                checked = _checked(self.path, piece, self.offset)
                self.offset += len(piece)
                yield checked
        last, self.pending, self.exhausted = bytes(self.pending), bytearray(), True
        yield _checked(self.path, last, self.offset)


def text_pieces(path: str, blocks: Iterator[bytes], offset: int, piece_bytes: int) -> Iterator[bytes]:
    """:class:`TextPieces` of a block stream."""
    return iter(TextPieces(path, Blocks(blocks), offset, piece_bytes))


def _last_cut(data: bytearray, end: int) -> int:
    """Offset just after the last newline of ``data[:end]``, else after its last other whitespace byte
    (not ``\\r``); 0 if none."""
    best = data.rfind(b"\n", 0, end)
    if best >= 0:
        return best + 1
    for b in _ASCII_WS:
        best = max(best, data.rfind(bytes([b]), 0, end))
    return best + 1


def _checked(path: str, piece: bytes, offset: int) -> bytes:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ShardError(path, 0, f"not valid UTF-8 at byte offset {offset + exc.start}") from None
    if b"\r" in piece:
        piece = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return piece


@dataclass
class ReadState:
    """Where a sequential read stands at a safe point: stream bytes consumed (decompressed), bytes read and
    not yet used, the line number (JSONL), the text piece read and not yet fed, and its byte offset."""

    consumed: int = 0
    pending: bytes = b""
    lineno: int = 0
    prev: Optional[bytes] = None
    offset: int = 0


class Checkpointer:
    """Saves a unit's counter and read state (pickled, via a temporary file and a rename) every ``every``
    stream bytes, but spending at most a tenth of the time on it; :meth:`restore` gives them back to a
    rerun with the same ``key`` (shard identity and counting plan)."""

    def __init__(self, path: Path, key: dict[str, Any], every: int):
        self.path, self.key, self.every = Path(path), key, every
        self.last, self.cost, self.since = 0, 0.0, time.perf_counter()

    def restore(self) -> Optional[tuple[StreamCounter, ReadState]]:
        try:
            with open(self.path, "rb") as fh:
                key, counter, state = pickle.load(fh)
        except Exception:  # none, torn or foreign: start over
            return None
        if key != self.key:
            return None
        self.last = state.consumed
        return counter, state

    def due(self, consumed: int) -> bool:
        spent = time.perf_counter() - self.since
        return consumed - self.last >= self.every and spent >= 10 * self.cost

    def save(self, counter: StreamCounter, state: ReadState) -> None:
        t0 = time.perf_counter()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump((self.key, counter, state), fh, protocol=pickle.HIGHEST_PROTOCOL)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        self.last, self.since = state.consumed, time.perf_counter()
        self.cost = self.since - t0

    def done(self) -> None:
        self.path.unlink(missing_ok=True)


def count_text(
    counter: StreamCounter,
    unit: Unit,
    piece_bytes: int,
    state: Optional[ReadState] = None,
    checkpoint: Optional[Checkpointer] = None,
) -> None:
    """Feed the text of a unit (one document, or a byte range of it) to ``counter``, from ``state`` on."""
    path = unit.shard.path
    zero = np.zeros(1, np.int64)
    state = state or ReadState(offset=unit.start)
    try:
        blocks = Blocks(byte_blocks(path, unit.start, unit.end), state.consumed)
        reader = TextPieces(path, blocks, state.offset, piece_bytes, state.pending)
        pieces = iter(reader)
        prev = state.prev if state.prev is not None else next(pieces)
        cont = unit.start > 0 or state.consumed > 0
        for piece in pieces:
            counter.feed(prev, zero, continues=cont, ends=False)
            prev, cont = piece, True
            if checkpoint is not None and not reader.exhausted and checkpoint.due(blocks.consumed):
                pending = bytes(reader.pending)
                checkpoint.save(counter, ReadState(blocks.consumed, pending, 0, prev, reader.offset))
        counter.feed(prev, zero, continues=cont, ends=unit.part == unit.parts - 1)
    except (EOFError, OSError, gzip.BadGzipFile) as exc:
        raise ShardError(path, 0, f"truncated or corrupt file ({exc})") from None
    except Exception as exc:
        if type(exc).__name__ == "ZstdError":
            raise ShardError(path, 0, f"truncated or corrupt file ({exc})") from None
        raise


# ------------------------------------------------------------------------------------------------ JSONL


class HugeRecord:
    """One JSONL record too long to hold: the text field's string is decoded and fed in pieces (cut after a
    literal space, which no JSON escape contains), the rest of the record kept and checked at the end."""

    def __init__(
        self, path: str, lineno: int, field: str, emit: Callable[[bytes, bool], None], piece_bytes: int
    ):
        self.path, self.lineno, self.field, self.emit, self.piece = path, lineno, field, emit, piece_bytes
        self.skeleton = bytearray()  # the record with the text replaced by ""
        self.raw = bytearray()  # the text string's undecoded bytes
        self.scan_from = 0
        self.state = "scan"  # scan | str (inside another string) | text (inside the text string)
        self.depth = 0
        self.expect_key = False
        self.key_pending = False
        self.key: Optional[str] = None
        self.after_colon = False
        self.str_start = 0
        self.seen = False

    def error(self, message: str) -> ShardError:
        return ShardError(self.path, self.lineno, message)

    def feed(self, data: bytes) -> None:
        if self.state == "text":
            self._text(data)
        else:
            self._scan(data)

    def _scan(self, data: bytes) -> None:
        """Copy the record into the skeleton until the text field's string value starts."""
        sk, i, n = self.skeleton, 0, len(data)
        while i < n:
            if self.state == "str":
                j = data.find(b'"', i)
                while j >= 0 and _escaped(data, j, sk):
                    j = data.find(b'"', j + 1)
                if j < 0:
                    sk += data[i:]
                    return
                sk += data[i : j + 1]
                i, self.state = j + 1, "scan"
                if self.key_pending:
                    try:
                        self.key = json.loads(bytes(sk[self.str_start :]))
                    except (ValueError, UnicodeDecodeError):
                        self.key = None
                    self.key_pending = False
                continue
            c = data[i]
            if c == 0x22:
                if self.depth == 1 and self.after_colon and self.key == self.field:
                    if self.seen:
                        raise self.error(f"record has field {self.field!r} twice")
                    self.seen, self.state, self.after_colon = True, "text", False
                    sk += b'""'
                    self._text(data[i + 1 :])
                    return
                self.key_pending = self.depth == 1 and self.expect_key
                self.expect_key = self.after_colon = False
                self.str_start = len(sk)
                self.state = "str"
            elif c in b"{[":
                self.depth += 1
                self.expect_key = c == 0x7B and self.depth == 1
            elif c in b"}]":
                self.depth -= 1
            elif c == 0x2C:
                self.expect_key = self.depth == 1
            if c == 0x3A:
                self.after_colon = True
            elif c not in b" \t\r\n":
                self.after_colon = False if c != 0x22 else self.after_colon
            sk.append(c)
            i += 1

    def _text(self, data: bytes) -> None:
        raw = self.raw
        raw += data
        j = raw.find(b'"', self.scan_from)
        while j >= 0 and _escaped(raw, j, b""):
            j = raw.find(b'"', j + 1)
        if j < 0:
            self.scan_from = len(raw)
            if len(raw) >= self.piece:
                cut = raw.rfind(b" ") + 1
                if cut > 0:
                    self._emit(bytes(raw[:cut]), False)
                    del raw[:cut]
                    self.scan_from = len(raw)
            return
        rest = bytes(raw[j + 1 :])
        self._emit(bytes(raw[:j]), True)
        self.raw, self.scan_from, self.state = bytearray(), 0, "scan"
        self._scan(rest)

    def _emit(self, body: bytes, last: bool) -> None:
        try:
            text = json.loads(b'"' + body + b'"')
        except UnicodeDecodeError as exc:
            raise self.error(f"not valid UTF-8 ({exc.reason})") from None
        except json.JSONDecodeError as exc:
            raise self.error(f"not valid JSON ({exc.msg.removesuffix(' at')})") from None
        self.emit(_normalise(text).encode("utf-8", "surrogatepass"), last)

    def end(self) -> None:
        """The record's line ended: check it (valid JSON once the text is replaced by "", text present)."""
        if self.state == "text":
            raise self.error("not valid JSON (unterminated string)")
        _record_text(self.path, self.lineno, bytes(self.skeleton), self.field)


def _escaped(buf: bytes | bytearray, j: int, before: bytes | bytearray) -> bool:
    """Whether the quote at ``buf[j]`` is escaped (an odd run of backslashes before it)."""
    k = j
    while k > 0 and buf[k - 1] == 0x5C:
        k -= 1
    run = j - k
    if k == 0 and before:  # the run may continue in what came before
        m = len(before)
        while m > 0 and before[m - 1] == 0x5C:
            m -= 1
            run += 1
    return run % 2 == 1


class JsonlReader:
    """Feeds the records of a unit of a JSONL shard to a counter: in batches of about ``piece_bytes``
    characters, a record longer than :data:`HUGE_RECORD` bytes streamed; resumable between batches."""

    def __init__(
        self,
        counter: StreamCounter,
        unit: Unit,
        text_field: str,
        piece_bytes: int,
        state: Optional[ReadState] = None,
        checkpoint: Optional[Checkpointer] = None,
    ):
        self.counter, self.unit, self.field, self.piece = counter, unit, text_field, piece_bytes
        self.path = unit.shard.path
        self.state = state or ReadState()
        self.checkpoint = checkpoint
        self.lineno = self.state.lineno
        self.batch: list[str] = []
        self.size = 0
        self.buf = bytearray()
        self.huge: Optional[HugeRecord] = None
        self.first_piece = True

    def flush(self) -> None:
        self.counter.feed_texts(self.batch)
        self.batch, self.size = [], 0

    def emit(self, piece: bytes, last: bool) -> None:
        self.counter.feed(piece, np.zeros(1, np.int64), continues=not self.first_piece, ends=last)
        self.first_piece = False

    def _stream(self, data: bytes) -> None:
        """Start streaming a huge record with its first bytes."""
        self.flush()
        self.first_piece = True
        self.huge = HugeRecord(self.path, self.lineno, self.field, self.emit, self.piece)
        self.huge.feed(data)

    def _line(self, line: bytes) -> None:
        self.lineno += 1
        if len(line) > HUGE_RECORD:  # stream it all the same (bounded memory per record)
            self._stream(line[: self.piece])
            for at in range(self.piece, len(line), self.piece):
                self.huge.feed(line[at : at + self.piece])  # type: ignore[union-attr]
            self.huge.end()  # type: ignore[union-attr]
            self.huge = None
            return
        text = _record_text(self.path, self.lineno, line, self.field)
        if text is not None:
            self.batch.append(text)
            self.size += len(text)
            if self.size >= self.piece:
                self.flush()

    def _block(self, block: bytes, base: int) -> None:
        """The lines of one block (``base``: the stream offset of its first byte)."""
        pos = 0
        while True:
            nl = block.find(b"\n", pos)
            if self.huge is not None:
                self.huge.feed(block[pos : nl if nl >= 0 else len(block)])
                if nl < 0:
                    return
                self.huge.end()
                self.huge, pos = None, nl + 1
                continue
            if nl < 0:
                self.buf += block[pos:]
                if len(self.buf) > HUGE_RECORD:
                    self.lineno += 1
                    data, self.buf = bytes(self.buf), bytearray()
                    self._stream(data)
                return
            line = bytes(self.buf) + block[pos : nl + 1] if self.buf else block[pos : nl + 1]
            self.buf = bytearray()
            pos = nl + 1
            self._line(line)
            cp = self.checkpoint
            if cp is not None and not self.batch and cp.due(base + pos):
                cp.save(self.counter, ReadState(base + pos, b"", self.lineno))

    def run(self) -> None:
        path, unit = self.path, self.unit
        try:
            blocks = Blocks(byte_blocks(path, unit.start, unit.end), self.state.consumed)
            for block in blocks:
                self._block(block, blocks.consumed - len(block))
            if self.huge is not None:
                self.huge.end()
            elif self.buf:
                self._line(bytes(self.buf))
            self.flush()
        except ShardError as exc:
            if unit.start > 0 and exc.line:
                raise ShardError(path, exc.line + lines_before(path, unit.start), exc.message) from None
            raise
        except (EOFError, OSError, gzip.BadGzipFile) as exc:
            raise ShardError(path, self.lineno + 1, f"truncated or corrupt file ({exc})") from None
        except Exception as exc:  # zstandard.ZstdError and other decompressor errors
            if type(exc).__name__ == "ZstdError":
                raise ShardError(path, self.lineno + 1, f"truncated or corrupt file ({exc})") from None
            raise


def count_parquet(counter: StreamCounter, unit: Unit, text_field: str, piece_bytes: int) -> None:
    """Feed the rows of a Parquet shard to ``counter`` in batches of about ``piece_bytes`` characters."""
    batch: list[str] = []
    size = 0
    for _, text in _parquet_documents(unit.shard.path, text_field):
        batch.append(text)
        size += len(text)
        if size >= piece_bytes:
            counter.feed_texts(batch)
            batch, size = [], 0
    counter.feed_texts(batch)


def count_unit(
    counter_of: Callable[[bool, bool], StreamCounter],
    unit: Unit,
    text_field: str,
    piece_bytes: int,
    line: bool,
    checkpoint: Optional[Checkpointer] = None,
) -> StreamCounter:
    """Count one unit: ``counter_of(in_document, in_segment)`` makes the counter for where it starts; a
    ``checkpoint`` saves the counter now and then, and a rerun continues from the last one."""
    kind = unit.shard.kind
    restored = checkpoint.restore() if checkpoint is not None else None
    if restored is not None:
        counter, state = restored
    else:
        in_doc = kind == "text" and unit.start > 0
        in_seg = in_doc and not (line and _previous_byte(unit.shard.path, unit.start) == b"\n")
        counter, state = counter_of(in_doc, in_seg), ReadState(offset=unit.start)
    counter.resumed_from = state.consumed
    if kind == "text":
        count_text(counter, unit, piece_bytes, state, checkpoint)
    elif kind == "jsonl":
        JsonlReader(counter, unit, text_field, piece_bytes, state, checkpoint).run()
    else:
        count_parquet(counter, unit, text_field, piece_bytes)
    return counter
