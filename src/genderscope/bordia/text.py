"""Corpus input: reading files (strict UTF-8, universal newlines), documents, segments and token ids.

Tokens are ``str.split()`` tokens (case-sensitive, no normalisation). A document is one file or one
generated sample; windows never cross documents. ``boundary="line"`` further cuts a document at every
newline and every ``<eos>`` token (the ``<eos>`` belongs to no segment). Spec §2.2.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from genderscope.common.errors import DataError, UsageError

EOS = "<eos>"

#: registry corpora: name -> (logical file name pattern with {split}, known splits)
REGISTRY_CORPORA: dict[str, str] = {
    "ptb": "corpora/ptb/ptb.{split}.txt",
    "wikitext-2": "corpora/wikitext-2/{split}.txt",
}
SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class Document:
    """One document: a display name and its text (already newline-normalised)."""

    name: str
    text: str


@dataclass
class TokenStream:
    """All kept tokens of a corpus as integer ids, cut into segments.

    ``types``: word types in first-occurrence order; ``ids``: int64 id per kept token (segments
    concatenated); ``seg_lengths``: tokens per non-empty segment; ``seg_doc``: document index of each
    segment; ``doc_lengths``: kept tokens per document; ``boundary`` and ``drop_tokens`` as used.
    """

    types: list[str]
    ids: np.ndarray
    seg_lengths: np.ndarray
    seg_doc: np.ndarray
    doc_lengths: np.ndarray
    boundary: str
    drop_tokens: frozenset[str] = field(default_factory=frozenset)

    @property
    def n_tokens(self) -> int:
        return int(self.ids.size)

    def position_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per token: the global start and (exclusive) end of its segment."""
        ends = np.cumsum(self.seg_lengths, dtype=np.int64)
        starts = ends - self.seg_lengths
        return np.repeat(starts, self.seg_lengths), np.repeat(ends, self.seg_lengths)


def read_text_file(path: Path) -> str:
    """The file's text: strict UTF-8 (error names the byte offset), ``\\r\\n`` and ``\\r`` -> ``\\n``."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not valid UTF-8 at byte offset {exc.start}") from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _is_readme(path: Path) -> bool:
    name = path.name
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return stem.lower() == "readme"


def directory_files(root: Path) -> list[Path]:
    """Files under ``root`` (recursive, sorted path order), README files skipped (spec §2.2)."""
    files = sorted(p for p in Path(root).rglob("*") if p.is_file() and not _is_readme(p))
    return files


def registry_corpus_file(spec: str) -> str | None:
    """``ptb``/``ptb:valid``/``wikitext-2:test`` -> logical data-registry name, or None if not a corpus
    name."""
    name, _, split = spec.partition(":")
    if name not in REGISTRY_CORPORA:
        return None
    split = split or "train"
    if split not in SPLITS:
        raise UsageError(f"corpus {spec!r}: unknown split {split!r}; use one of {', '.join(SPLITS)}")
    return REGISTRY_CORPORA[name].format(split=split)


def resolve_corpus_paths(specs: Sequence[str | Path]) -> list[Path]:
    """Files for a list of corpus arguments: files, directories, or registry names (``ptb:valid``)."""
    paths: list[Path] = []
    for spec in specs:
        p = Path(spec)
        if p.is_dir():
            found = directory_files(p)
            if not found:
                raise DataError(f"{p}: directory holds no corpus files")
            paths.extend(found)
        elif p.is_file():
            paths.append(p)
        else:
            logical = registry_corpus_file(str(spec))
            if logical is None:
                raise DataError(
                    f"{spec}: no such file or directory (registry corpora: "
                    f"{', '.join(n + '[:train|valid|test]' for n in REGISTRY_CORPORA)})"
                )
            from genderscope.data.registry import DataRegistry

            reg = DataRegistry()
            if logical not in reg.files:
                raise DataError(f"corpus {spec!r}: {logical} is not in the data registry; pass its path")
            try:
                paths.append(reg.path(logical))
            except DataError as exc:
                msg = f"corpus {spec!r}: {exc}; or pass a copy's path instead of {spec!r}"
                raise DataError(msg) from None
    return paths


def read_corpus(specs: Sequence[str | Path]) -> list[Document]:
    """Read corpus arguments into documents (one per file)."""
    return [Document(str(p), read_text_file(p)) for p in resolve_corpus_paths(specs)]


def documents_from_texts(texts: Iterable[str], prefix: str = "sample") -> list[Document]:
    """In-memory documents (e.g. generated samples), named ``prefix/00000`` …"""
    return [Document(f"{prefix}/{i:05d}", t) for i, t in enumerate(texts)]


def split_units(texts: Sequence[str], boundary: str) -> tuple[list[str], list[int], list[int]]:
    """(tokens, tokens per unit, document of each unit): a unit is a document, or a line (``line``)."""
    tokens: list[str] = []
    unit_lengths: list[int] = []
    unit_doc: list[int] = []
    for d, text in enumerate(texts):
        if boundary == "document":
            toks = text.split()
            tokens.extend(toks)
            unit_lengths.append(len(toks))
            unit_doc.append(d)
        else:
            per_line = [line.split() for line in text.split("\n")]
            unit_lengths.extend(map(len, per_line))
            unit_doc.extend(itertools.repeat(d, len(per_line)))
            tokens.extend(itertools.chain.from_iterable(per_line))
    return tokens, unit_lengths, unit_doc


def cut_segments(
    codes: np.ndarray,
    type_dropped: np.ndarray,
    eos_id: int | None,
    unit_lengths: Sequence[int],
    unit_doc: Sequence[int],
    n_docs: int,
    boundary: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(kept codes, segment lengths, segment documents, kept tokens per document) of a token stream:
    units start segments, so does the token after ``<eos>`` (``line``); dropped types close up."""
    lengths = np.asarray(unit_lengths, dtype=np.int64)
    unit_of_tok = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    starts = np.ones(codes.size, dtype=bool)
    starts[1:] = unit_of_tok[1:] != unit_of_tok[:-1]
    if boundary == "line" and eos_id is not None:
        starts[1:] |= (codes == eos_id)[:-1]
    seg_key = np.cumsum(starts) - 1
    if type_dropped.any():
        keep = ~type_dropped[codes]
        codes, seg_key, unit_of_tok = codes[keep], seg_key[keep], unit_of_tok[keep]
    unit_doc_arr = np.asarray(unit_doc, dtype=np.int64)
    doc_lengths = np.bincount(unit_doc_arr[unit_of_tok], minlength=n_docs).astype(np.int64)
    if codes.size:
        seg_change = np.ones(codes.size, dtype=bool)
        seg_change[1:] = seg_key[1:] != seg_key[:-1]
        first = np.flatnonzero(seg_change)
        seg_lengths = np.diff(np.append(first, codes.size)).astype(np.int64)
        seg_doc = unit_doc_arr[unit_of_tok[first]]
    else:
        seg_lengths = np.zeros(0, np.int64)
        seg_doc = np.zeros(0, np.int64)
    return codes, seg_lengths, seg_doc, doc_lengths


def tokenize_documents(
    docs: Sequence[Document], boundary: str = "document", drop_tokens: Iterable[str] = (EOS,)
) -> TokenStream:
    """Tokenise, drop ``drop_tokens`` (positions close up) and cut segments; ids in first-occurrence order."""
    import pandas as pd

    if boundary not in ("document", "line"):
        raise UsageError(f"boundary must be 'document' or 'line', got {boundary!r}")
    drop = frozenset(drop_tokens)
    tokens, unit_lengths, unit_doc = split_units([d.text for d in docs], boundary)
    n_docs = len(docs)
    if not tokens:
        return TokenStream(
            [],
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(n_docs, np.int64),
            boundary,
            drop,
        )
    codes, uniques = pd.factorize(np.array(tokens, dtype=object))
    codes = codes.astype(np.int64)
    del tokens
    types = list(uniques)
    drop_types = set(drop) | ({EOS} if boundary == "line" else set())
    type_dropped = np.fromiter((t in drop_types for t in types), dtype=bool, count=len(types))
    eos_id = types.index(EOS) if EOS in types else None
    codes, seg_lengths, seg_doc, doc_lengths = cut_segments(
        codes, type_dropped, eos_id, unit_lengths, unit_doc, n_docs, boundary
    )
    if type_dropped.any():
        remap = np.cumsum(~type_dropped) - 1
        codes = remap[codes]
        types = [t for i, t in enumerate(types) if not type_dropped[i]]
    # types that were only dropped tokens disappear; ids of the rest are in first-occurrence order
    return TokenStream(types, codes, seg_lengths, seg_doc, doc_lengths, boundary, drop)
