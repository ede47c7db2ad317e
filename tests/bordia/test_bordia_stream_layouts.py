"""Corpus audits in bounded memory whatever the corpus looks like (issue 43): long documents counted in
pieces and byte ranges with the window state carried across every edge give the whole-document counts;
one text file, compressed text, one huge JSONL record and a folder mixing them equal ``bordia score``;
a SIGKILL inside a single-file run loses at most the unfinished ranges."""

from __future__ import annotations

from repo_paths import ROOT
import gzip
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genderscope.bordia import native, ranges
from genderscope.bordia.bias import ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, Counts
from genderscope.bordia.counter import SeamJoiner, StreamCounter, Vocabulary
from genderscope.bordia.pairs import load_gender_pairs, parse_gender_pairs
from genderscope.bordia.scoring import context_configs, score_documents
from genderscope.bordia.stream import PartialCounts
from genderscope.bordia.text import documents_from_texts, read_corpus
from genderscope.commands.bordia.audit import audit_corpus
from genderscope.commands.bordia.options import CorpusAuditOptions

QUIET = ScoreOptions(bootstrap=0)
PAIRS = parse_gender_pairs("he she\nhim her\nHis Her\n", "pairs")
WORDS = ["he", "she", "him", "her", "doctor", "nurse", "the", "<eos>", "\n", "kind", "His", "\u3000", "\n\n"]
HAVE_ZSTD = importlib.util.find_spec("zstandard") is not None


def assert_same(a: Counts, b: Counts, bitwise_floats: bool = False) -> None:
    """Identical types, totals, integer counts and key set; float counts to a relative 1e-12 with the same
    zero pattern (``bitwise_floats``: identical)."""
    assert a.types == b.types
    assert np.array_equal(a.freq, b.freq)
    totals = ("n_tokens", "n_male", "n_female", "n_segments", "n_documents")
    assert [getattr(a, t) for t in totals] == [getattr(b, t) for t in totals]
    assert np.array_equal(a.authors_keys, b.authors_keys)
    for x, y in ((a.c_male, b.c_male), (a.c_female, b.c_female)):
        if x.dtype.kind == "i" or bitwise_floats:
            assert np.array_equal(x, y)
        else:
            assert np.array_equal(x == 0, y == 0)
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0)


def whitespace_cuts(data: bytes, picks: list[int]) -> list[int]:
    """Offsets just after whitespace bytes (where a reader may cut), chosen by ``picks``."""
    spots = [i + 1 for i, b in enumerate(data) if b in b" \n\t"]
    return sorted({spots[p % len(spots)] for p in picks}) if spots else []


def count_in_ranges(text: str, configs, range_picks, piece_picks) -> PartialCounts:
    """One document cut into byte ranges (each its own counter, as the audit's workers) and each range into
    pieces, joined at the seams."""
    data = text.encode()
    cuts = [0] + [c for c in whitespace_cuts(data, range_picks) if 0 < c < len(data)] + [len(data)]
    acc = PartialCounts(tuple(c.context for c in configs))
    joiner = SeamJoiner(PAIRS, configs, acc)
    line = configs[0].boundary == "line"
    zero = np.zeros(1, np.int64)
    for a, b in zip(cuts, cuts[1:]) if data else [(0, 0)]:
        counter = StreamCounter(PAIRS, configs, a > 0, a > 0 and not (line and data[a - 1 : a] == b"\n"))
        chunk = data[a:b]
        inner = [0] + [c for c in whitespace_cuts(chunk, piece_picks) if 0 < c < len(chunk)] + [len(chunk)]
        spans = list(zip(inner, inner[1:])) or [(0, 0)]
        for i, (x, y) in enumerate(spans):
            last = b == len(data) and i == len(spans) - 1
            counter.feed(chunk[x:y], zero, continues=a > 0 or i > 0, ends=last)
        joiner.add(*counter.result())
    joiner.finish()
    return acc


@pytest.mark.filterwarnings("ignore:no word co-occurs", "ignore:untruncated infinite context")
@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), max_size=120),
    range_picks=st.lists(st.integers(0, 10**6), max_size=8),
    piece_picks=st.lists(st.integers(0, 10**6), max_size=8),
    geometry=st.sampled_from(["paper", "reference"]),
    boundary=st.sampled_from(["document", "line"]),
    k=st.integers(1, 4),
    W=st.integers(3, 9),
    max_distance=st.sampled_from([None, 1, 3, 20]),
    decay=st.sampled_from([0.95, 0.5, 1e-5]),
)
def test_any_range_and_piece_cuts_give_the_whole_document_counts(
    words, range_picks, piece_picks, geometry, boundary, k, W, max_distance, decay
):
    """Integer counts identical, float counts to 1e-12 with the same zeros, totals and key set identical,
    however a document is cut into ranges and pieces (at whitespace, as the readers cut)."""
    boundary = "document" if geometry == "reference" else boundary
    base = CountConfig(geometry=geometry, k=k, W=W, max_distance=max_distance, boundary=boundary, decay=decay)
    configs = context_configs(base, "both")
    text = " ".join(words)
    memory = score_documents(documents_from_texts([text]), PAIRS, configs, QUIET)
    acc = count_in_ranges(text, configs, range_picks, piece_picks)
    for cfg in configs:
        assert_same(memory[cfg.context].counts, acc.counts(cfg.context, cfg, PAIRS))


SPACES = [chr(c) for c in range(0x3001) if chr(c).isspace()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(SPACES), st.text(min_size=1, max_size=4)), max_size=40))
def test_native_tokens_are_str_split_tokens(parts):
    """The byte-level tokenizer splits exactly where ``str.split()`` does (all 29 whitespace code points,
    multi-byte ones included), and ids follow first occurrence."""
    text = "".join(parts)
    vocab = Vocabulary()
    ids = vocab.tokenize(text.encode("utf-8", "surrogatepass"), np.zeros(1, np.int64), False, 1, 0, 0, -1)[0]
    assert [vocab.words[i] for i in ids] == text.split()
    assert vocab.words == list(dict.fromkeys(text.split()))


KERNELS = (
    "tokenize scan_token add_type lookup rehash ws_len window_counts decay_counts gendered_positions find_ids"
)


@pytest.mark.skipif(not native.HAVE_NUMBA, reason="compares the compiled kernels with their Python source")
@pytest.mark.parametrize(
    "base",
    [
        CountConfig(boundary="line", max_distance=None),
        CountConfig(k=3, max_distance=7),
        CountConfig(geometry="reference", W=5),
    ],
    ids=["line-untruncated", "paper", "reference"],
)
def test_kernels_run_as_plain_python_give_the_same_counts(base, monkeypatch):
    """Without numba the kernels run as plain Python: the same counts (what a machine without the [scale]
    extra computes)."""
    text = " ".join(np.random.default_rng(1).choice(WORDS, 400))
    configs = context_configs(base, "both")
    fast = count_in_ranges(text, configs, [7, 300], [50])
    for name in KERNELS.split():
        monkeypatch.setattr(native, name, getattr(native, name).py_func)
    slow = count_in_ranges(text, configs, [7, 300], [50])
    for cfg in configs:
        assert_same(fast.counts(cfg.context, cfg, PAIRS), slow.counts(cfg.context, cfg, PAIRS), True)


# ------------------------------------------------------------------------------------------------ layouts


def wikitext(data_registry) -> str:
    mirror = Path(os.environ["GENDERSCOPE_DATA_MIRROR"])
    return (mirror / "corpora/wikitext-2/valid.txt").read_text(encoding="utf-8")


OPTION_SETS = [
    {},
    {"boundary": "line"},
    {"boundary": "line", "max_distance": "none"},
    {"mode": "reference", "W": 11},
]


@pytest.mark.filterwarnings("ignore:untruncated infinite context")
@pytest.mark.parametrize(
    "opts", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
def test_one_text_file_in_byte_ranges_equals_bordia_score(opts, tmp_path, data_registry):
    """WikiText-2 valid as one .txt (one document): ~6 byte ranges of pieces of 20 kB, 2 workers."""
    path = tmp_path / "wiki.txt"
    path.write_text(wikitext(data_registry), encoding="utf-8")
    base = CorpusAuditOptions(corpora=[str(path)], pairs="wiki", out=tmp_path / "o", bootstrap=0)
    options = replace(base, range_bytes=200_000, batch_chars=20_000, workers=2, **opts)
    result = audit_corpus(options)
    assert result.results.extra["ranges"]["total"] >= 5
    configs = context_configs(options.count_config(), "both")
    memory = score_documents(read_corpus([str(path)]), load_gender_pairs("wiki"), configs, QUIET)
    for ctx, sc in memory.items():
        assert_same(sc.counts, result.scores[ctx].counts)


def test_reference_infinite_streamed_in_pieces_is_bit_identical(tmp_path, data_registry):
    """One worker adds in position order: the authors' infinite counts stay bit-identical (spec §3.5)."""
    path = tmp_path / "wiki.txt"
    path.write_text(wikitext(data_registry), encoding="utf-8")
    options = CorpusAuditOptions(
        corpora=[str(path)],
        pairs="wiki",
        out=tmp_path / "o",
        bootstrap=0,
        mode="reference",
        batch_chars=9_000,
    )
    result = audit_corpus(options)
    cfg = context_configs(options.count_config(), "infinite")
    memory = score_documents(read_corpus([str(path)]), load_gender_pairs("wiki"), cfg, QUIET)
    assert_same(memory["infinite"].counts, result.scores["infinite"].counts, bitwise_floats=True)


def compress(path: Path, body: bytes) -> None:
    if path.name.endswith(".gz"):
        body = gzip.compress(body, mtime=0)
    elif path.name.endswith(".zst"):
        import zstandard

        body = zstandard.ZstdCompressor().compress(body)
    path.write_bytes(body)


def test_a_folder_mixing_layouts_equals_bordia_score(tmp_path, data_registry, monkeypatch):
    """A .txt, a .txt.gz, a .txt.zst (one document each), a JSONL shard with ordinary records and one
    record streamed as huge (its text decoded in pieces), in one folder: the in-memory counts."""
    monkeypatch.setattr(ranges, "HUGE_RECORD", 50_000)
    monkeypatch.setattr(ranges, "BLOCK", 4096)
    made = []

    class Counted(ranges.HugeRecord):
        def __init__(self, *args, **kw):
            made.append(args[1])
            super().__init__(*args, **kw)

    monkeypatch.setattr(ranges, "HugeRecord", Counted)
    text = wikitext(data_registry)
    lines = [ln for ln in text.split("\n") if ln.strip()]
    folder = tmp_path / "corpus"
    folder.mkdir()
    docs = []
    (folder / "a.txt").write_text("\r\n".join(lines[:300]), encoding="utf-8")
    docs.append("\n".join(lines[:300]))
    for name, chunk in (("b.txt.gz", lines[300:500]), ("c.txt.zst", lines[500:700])):
        if name.endswith(".zst") and not HAVE_ZSTD:
            continue
        compress(folder / name, "\n".join(chunk).encode())
        docs.append("\n".join(chunk))
    huge = "\n".join(lines[700:1500]) + ' tricky: \\ " \U0001f600 \\u12 end'
    records = [{"id": 1, "text": lines[1500]}, {"meta": {"text": "no", "x": [1, {"y": "}"}]}, "text": huge}]
    records.append({"text": lines[1501]})
    body = "".join(json.dumps(r) + "\n" for r in records)
    (folder / "d.jsonl").write_text(body, encoding="utf-8")
    docs += [lines[1500], huge, lines[1501]]
    configs = context_configs(CountConfig(), "both")
    memory = score_documents(documents_from_texts(docs), load_gender_pairs("wiki"), configs, QUIET)
    options = CorpusAuditOptions(corpora=[str(folder)], pairs="wiki", out=tmp_path / "o", bootstrap=0)
    result = audit_corpus(replace(options, batch_chars=7_000, range_bytes=30_000))
    assert made == [2]  # the second record was streamed
    for ctx, sc in memory.items():
        assert_same(sc.counts, result.scores[ctx].counts)


@pytest.mark.parametrize(
    "record,message",
    [
        ('{"text": "a b", "text": "c"}', "field 'text' twice"),
        ('{"body": "a b"}', "record lacks field 'text'"),
        ('{"text": 7, "pad": "a b"}', "non-string field 'text'"),
        ('{"text": "a \\x b"}', "not valid JSON"),
    ],
)
def test_bad_huge_records_are_one_line(record, message, tmp_path, monkeypatch, data_registry):
    monkeypatch.setattr(ranges, "HUGE_RECORD", 8)
    (tmp_path / "x.jsonl").write_text('{"text": "fine"}\n' + record + "\n", encoding="utf-8")
    options = CorpusAuditOptions(corpora=[str(tmp_path / "x.jsonl")], pairs="wiki", out=tmp_path / "o")
    with pytest.raises(Exception) as info:
        audit_corpus(replace(options, bootstrap=0, batch_chars=4))
    assert "x.jsonl:2:" in str(info.value) and message in str(info.value), str(info.value)


def test_error_in_a_later_jsonl_range_names_the_file_line(tmp_path, data_registry):
    body = "".join(json.dumps({"text": f"he said {i}"}) + "\n" for i in range(3000)) + "{oops\n"
    (tmp_path / "x.jsonl").write_bytes(body.encode())
    options = CorpusAuditOptions(corpora=[str(tmp_path / "x.jsonl")], pairs="wiki", out=tmp_path / "o")
    with pytest.raises(Exception) as info:
        audit_corpus(replace(options, bootstrap=0, range_bytes=5_000))
    assert "x.jsonl:3001: not valid JSON" in str(info.value)


def test_invalid_utf8_in_a_later_range_names_the_byte_offset(tmp_path, data_registry):
    data = b"he said so\n" * 5000 + b"bad \xff byte\n"
    (tmp_path / "x.txt").write_bytes(data)
    options = CorpusAuditOptions(corpora=[str(tmp_path / "x.txt")], pairs="wiki", out=tmp_path / "o")
    with pytest.raises(Exception) as info:
        audit_corpus(replace(options, bootstrap=0, range_bytes=7_000, batch_chars=1_000))
    bad = data.index(bytes([0xFF]))
    assert f"not valid UTF-8 at byte offset {bad}" in str(info.value)


# --------------------------------------------------------------------------------------------- memory, resume


def big_text(path: Path, data_registry, megabytes: int) -> None:
    """A plain-text file of about ``megabytes`` MB: WikiText-2 valid repeated (one document)."""
    text = wikitext(data_registry).encode()
    with open(path, "wb") as fh:
        for _ in range(max(1, megabytes * 1_000_000 // len(text))):
            fh.write(text)


RUN = r"""
import json, resource, sys
from pathlib import Path
from genderscope.commands.bordia.audit import audit_corpus
from genderscope.commands.bordia.options import CorpusAuditOptions
a = json.loads(sys.argv[1])
r = audit_corpus(CorpusAuditOptions(corpora=[a["corpus"]], pairs="wiki", bootstrap=0, out=Path(a["out"]),
                 batch_chars=a["batch"], range_bytes=a["range"]))
print(json.dumps({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "tokens": r.scores["fixed"].counts.n_tokens}))
"""


@pytest.mark.slow  # a 40 MB corpus: about a minute of CPU, heavy beside a parallel suite
def test_one_large_text_file_is_counted_in_bounded_memory(tmp_path, data_registry):
    """A 40 MB single-document .txt (about 7 M tokens; `bordia score` would need ~8 GB): peak memory of the
    whole audit process stays under 600 MB."""
    path = tmp_path / "big.txt"
    big_text(path, data_registry, 40)
    arg = {"corpus": str(path), "out": str(tmp_path / "o"), "batch": 1_000_000, "range": 16_000_000}
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(arg)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["tokens"] > 6_000_000 and out["rss_mb"] < 600, out


def test_sigkill_inside_a_single_file_then_resume(tmp_path, data_registry):
    """A single 6 MB .txt in 30 byte ranges: killed after 3 ranges are written, the rerun counts only the
    unfinished ranges and its tables equal an uninterrupted run's."""
    import pyarrow.parquet as pq

    path = tmp_path / "one.txt"
    big_text(path, data_registry, 6)
    out, fresh = tmp_path / "o", tmp_path / "fresh"
    common = ["--pairs", "wiki", "--bootstrap", "0", "--range-bytes", "200000", "--batch-chars", "50000"]
    code = "from genderscope.cli.app import main; main()"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-c", code, "bordia", "audit", str(path), *common, "--out", str(out)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and len(list((out / "partials").glob("*.r*.npz"))) < 3:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = len(list((out / "partials").glob("*.r*.npz")))
    options = CorpusAuditOptions(corpora=[str(path)], pairs="wiki", out=out, bootstrap=0)
    options = replace(options, range_bytes=200_000, batch_chars=50_000)
    result = audit_corpus(options)
    total = result.results.extra["ranges"]["total"]
    assert 3 <= kept < total and result.results.extra["ranges"]["reused"] == kept
    audit_corpus(replace(options, out=fresh))
    for ctx in ("fixed", "infinite"):
        for table in ("counts", "bias"):
            a = pq.read_table(out / ctx / f"{table}.parquet")
            b = pq.read_table(fresh / ctx / f"{table}.parquet")
            assert a.equals(b), (ctx, table)


@pytest.mark.parametrize("name", ["one.jsonl.zst", "one.txt.gz"])
def test_sigkill_inside_a_compressed_file_then_resume(name, tmp_path, data_registry):
    """A compressed file is read from its start: its counter is saved now and then (here every 300 kB of
    text); killed after a save, the rerun continues from it and its tables equal an uninterrupted run's."""
    import pyarrow.parquet as pq

    if name.endswith(".zst") and not HAVE_ZSTD:
        pytest.skip("needs zstandard")
    text = wikitext(data_registry)
    lines = [ln for ln in text.split("\n") if ln.strip()] * 3
    if name.endswith(".jsonl.zst"):
        body = "".join(json.dumps({"text": ln}) + "\n" for ln in lines).encode()
    else:
        body = "\n".join(lines).encode()
    path = tmp_path / name
    compress(path, body)
    out, fresh = tmp_path / "o", tmp_path / "fresh"
    common = ["--pairs", "wiki", "--bootstrap", "0", "--range-bytes", "300000", "--batch-chars", "20000"]
    code = "from genderscope.cli.app import main; main()"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-c", code, "bordia", "audit", str(path), *common, "--out", str(out)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    resume = out / "partials" / "0000000.resume"
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and not resume.exists():
        time.sleep(0.002)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert resume.exists() and not (out / "partials" / "0000000.npz").exists(), "killed too late"
    options = CorpusAuditOptions(corpora=[str(path)], pairs="wiki", out=out, bootstrap=0)
    options = replace(options, range_bytes=300_000, batch_chars=20_000)
    audit_corpus(options)
    with np.load(out / "partials" / "0000000.npz") as z:
        meta = json.loads(z["meta"].tobytes().decode())
    assert meta["resumed_from"] > 0 and not resume.exists()
    audit_corpus(replace(options, out=fresh))
    for ctx in ("fixed", "infinite"):
        for table in ("counts", "bias"):
            a = pq.read_table(out / ctx / f"{table}.parquet")
            b = pq.read_table(fresh / ctx / f"{table}.parquet")
            assert a.equals(b), (ctx, table)


def test_bias_of_streamed_counts_equals_in_memory(tmp_path, data_registry):
    """μ and σ of a text file counted in ranges equal the in-memory ones to 1e-12."""
    path = tmp_path / "wiki.txt"
    path.write_text(wikitext(data_registry), encoding="utf-8")
    options = CorpusAuditOptions(corpora=[str(path)], pairs="wiki", out=tmp_path / "o", bootstrap=0)
    result = audit_corpus(replace(options, range_bytes=150_000, batch_chars=30_000))
    memory = score_documents(
        read_corpus([str(path)]), load_gender_pairs("wiki"), context_configs(CountConfig(), "both"), QUIET
    )
    for ctx, sc in memory.items():
        a, b = sc.bias.summary, bias_scores(result.scores[ctx].counts, QUIET).summary
        assert a["n_scored"] == b["n_scored"]
        assert abs(a["mu"] - b["mu"]) <= 1e-12 and abs(a["sigma"] - b["sigma"]) <= 1e-12


def test_bordia_score_points_to_audit_before_reading_a_large_corpus(tmp_path, data_registry):
    """Above --max-bytes, `bordia score` stops before reading: exit 2, one line naming `bordia audit`."""
    path = tmp_path / "c.txt"
    path.write_text("he said she said\n" * 1000, encoding="utf-8")
    code = "from genderscope.cli.app import main; main()"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    args = [str(path), "--pairs", "wiki", "--max-bytes", "10000", "--out", str(tmp_path / "o")]
    proc = subprocess.run(
        [sys.executable, "-c", code, "bordia", "score", *args], capture_output=True, text=True, env=env
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert (
        "17,000 bytes" in lines[0]
        and "genderscope bordia audit" in lines[0]
        and "Traceback" not in proc.stderr
    )
    assert not (tmp_path / "o" / "results.json").exists()
