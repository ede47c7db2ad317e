"""Corpus statistics of an audit on disk: per-word counts and biases as Parquet, and reading them back.

``<out>/<context>/counts.parquet`` (``word``, ``freq``, ``male``, ``female``, ``authors_key``; every word type
in first-occurrence order) and ``<out>/<context>/bias.parquet`` (the scored words: counts, ``p_male``,
``p_female``, ``bias``, ascending bias) with ``<out>/corpus_stats.json`` (the count settings and pair list
they were made with). Without pyarrow the same tables are written as ``.tsv``. :func:`load_corpus_counts`
reads the counts back as :class:`~genderscope.bordia.cooccurrence.Counts`, e.g. as the reference corpus of
task ``cooccurrence-amplification``, after checking that the settings match.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from genderscope.bordia.cooccurrence import CountConfig, Counts, atomic_write_json
from genderscope.bordia.pairs import GenderPairs
from genderscope.common.errors import DataError, UsageError

STATS_FILE = "corpus_stats.json"


def have_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _write_table(path: Path, columns: dict[str, Any]) -> Path:
    """``path`` + ``.parquet`` (pyarrow) or ``.tsv``; returns the file written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if have_pyarrow():
        import pyarrow as pa
        import pyarrow.parquet as pq

        target = path.with_suffix(".parquet")
        tmp = target.with_name(f".{target.name}.tmp")
        with open(tmp, "wb") as fh:  # a file object: pyarrow would read "x:/..." in a path as a URI scheme
            pq.write_table(pa.table({k: (list(v) if k == "word" else v) for k, v in columns.items()}), fh)
        tmp.replace(target)
        return target
    target = path.with_suffix(".tsv")
    names = list(columns)
    cols = [v if isinstance(v, list) else v.tolist() for v in columns.values()]
    with open(target, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(names) + "\n")
        for row in zip(*cols):
            fh.write("\t".join(repr(x) if isinstance(x, float) else str(x) for x in row) + "\n")
    return target


def write_corpus_stats(
    out: Path, scores: Mapping[str, Any], extra: Mapping[str, Any] | None = None
) -> list[Path]:
    """The per-word tables of every context of ``scores`` ({context: ContextScore}) and corpus_stats.json."""
    out = Path(out)
    written = []
    for ctx, sc in scores.items():
        c, b = sc.counts, sc.bias
        keys = c.authors_keys if c.authors_keys is not None else np.ones(len(c.types), bool)
        written.append(
            _write_table(
                out / ctx / "counts",
                {
                    "word": c.types,
                    "freq": c.freq,
                    "male": c.c_male,
                    "female": c.c_female,
                    "authors_key": keys,
                },
            )
        )
        written.append(
            _write_table(
                out / ctx / "bias",
                {
                    "word": b.words,
                    "freq": b.freq,
                    "male": b.c_male,
                    "female": b.c_female,
                    "p_male": b.p_male,
                    "p_female": b.p_female,
                    "bias": b.bias,
                },
            )
        )
    first = next(iter(scores.values()))
    meta = {
        "pairs": first.counts.pairs.describe(),
        "count_configs": {ctx: sc.counts.config.describe() for ctx, sc in scores.items()},
        **dict(extra or {}),
    }
    atomic_write_json(out / STATS_FILE, meta)
    return written


def _read_table(stem: Path) -> dict[str, list[Any]]:
    pq_path, tsv_path = stem.with_suffix(".parquet"), stem.with_suffix(".tsv")
    if pq_path.exists():
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DataError(
                f"{pq_path}: reading Parquet needs pyarrow (pip install 'genderscope[report]')"
            ) from None
        with open(pq_path, "rb") as fh:  # a file object, as when writing
            return pq.read_table(fh).to_pydict()
    if tsv_path.exists():
        with open(tsv_path, encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
        return {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}
    raise DataError(f"{stem}.parquet: no such file (is the folder a `bordia audit` output?)")


def _column(values: Sequence[Any], dtype: Any) -> np.ndarray:
    cast = int if dtype is np.int64 else float
    return np.array([cast(v) for v in values], dtype=dtype)


def load_corpus_counts(folder: Path, configs: Sequence[CountConfig], pairs: GenderPairs) -> dict[str, Counts]:
    """Counts per context from an audit folder, checked against the wanted ``configs`` and ``pairs``."""
    folder = Path(folder)
    meta_path = folder / STATS_FILE
    if not meta_path.exists():
        raise DataError(f"{meta_path}: no such file (pass the --out folder of `genderscope bordia audit`)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("pairs", {}).get("pairs_sha256") != pairs.describe().get("pairs_sha256") or meta.get(
        "pairs", {}
    ).get("fix_wife_husband") != pairs.describe().get("fix_wife_husband"):
        raise UsageError(
            f"{folder}: counted with pair list {meta.get('pairs', {}).get('pairs_file')}; this run uses "
            f"{pairs.name} (give the same --pairs and --fix-wife-husband)"
        )
    out: dict[str, Counts] = {}
    for cfg in configs:
        cfg = cfg.resolved()
        have = meta.get("count_configs", {}).get(cfg.context)
        if have is None:
            raise UsageError(f"{folder}: no {cfg.context} context counts (audit it with --context both)")
        want = json.loads(json.dumps(cfg.describe()))
        if have != want:
            diff = ", ".join(
                f"{k}={have.get(k)!r} (wanted {want.get(k)!r})" for k in want if have.get(k) != want.get(k)
            )
            raise UsageError(f"{folder}: {cfg.context} counts made with other settings: {diff}")
        t = _read_table(folder / cfg.context / "counts")
        fixed = cfg.context == "fixed"
        num = np.int64 if fixed else np.float64
        words = [str(w) for w in t["word"]]
        keys = np.array([k in (True, "True") for k in t["authors_key"]], dtype=bool)
        out[cfg.context] = Counts(
            words,
            _column(t["freq"], np.int64),
            _column(t["male"], num),
            _column(t["female"], num),
            int(meta["totals"]["n_male"]),
            int(meta["totals"]["n_female"]),
            int(meta["totals"]["n_tokens"]),
            int(meta["totals"]["n_segments"]),
            int(meta["totals"]["n_documents"]),
            cfg,
            pairs,
            keys,
        )
    return out
