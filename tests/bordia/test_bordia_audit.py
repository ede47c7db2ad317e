"""`bordia audit`: streaming counts equal the in-memory path (registry corpora, every option set, shard and
batch splits), shard formats, resume after SIGKILL, bad shards, estimates, the terminal table, Ray."""

from __future__ import annotations

from repo_paths import ROOT
import gzip
import importlib.util
import json
import os
import re
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

from genderscope.bordia.bias import ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, Counts
from genderscope.bordia.pairs import load_gender_pairs, parse_gender_pairs
from genderscope.bordia.scoring import context_configs, score_documents
from genderscope.bordia.counter import count_texts
from genderscope.bordia.stream import PartialCounts
from genderscope.bordia.text import documents_from_texts, read_corpus
from genderscope.commands.bordia.audit import audit_corpus
from genderscope.commands.bordia.options import CorpusAuditOptions

QUIET = ScoreOptions(bootstrap=0)


def assert_same_counts(a: Counts, b: Counts) -> None:
    """Counts identical (float counts to a relative 1e-12, same zero pattern), bias to 1e-12."""
    assert a.types == b.types
    assert np.array_equal(a.freq, b.freq)
    assert (a.n_tokens, a.n_male, a.n_female, a.n_segments, a.n_documents) == (
        b.n_tokens,
        b.n_male,
        b.n_female,
        b.n_segments,
        b.n_documents,
    )
    assert np.array_equal(a.authors_keys, b.authors_keys)
    for x, y in ((a.c_male, b.c_male), (a.c_female, b.c_female)):
        if x.dtype.kind == "i" and y.dtype.kind == "i":
            assert np.array_equal(x, y)
        else:
            assert np.array_equal(x == 0, y == 0)
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0)
    ba, bb = bias_scores(a, QUIET).as_dict(), bias_scores(b, QUIET).as_dict()
    assert ba.keys() == bb.keys()
    assert max((abs(ba[w] - bb[w]) for w in ba), default=0.0) <= 1e-12


OPTION_SETS = [
    {},
    {"boundary": "line"},
    {"k": 3, "max_distance": None, "boundary": "line"},
    {"max_distance": 7, "decay": 0.8},
    {"geometry": "reference"},
    {"geometry": "reference", "W": 11},
    {"drop_tokens": frozenset({"the"})},
]


@pytest.mark.filterwarnings("ignore:untruncated infinite context")
@pytest.mark.parametrize("corpus,pairs", [("ptb", "penn"), ("wikitext-2", "wiki")])
@pytest.mark.parametrize(
    "opts", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
def test_registry_corpora_stream_equals_in_memory(corpus, pairs, opts, data_registry, tmp_path):
    """Each registry split is a shard; batches of ~50k characters cut shards between documents... and
    a text file is one document, so 60k-character batches leave it whole: the split test is below."""
    specs = [f"{corpus}:valid", f"{corpus}:test"]
    gp = load_gender_pairs(pairs)
    configs = context_configs(CountConfig(**opts), "both")
    memory = score_documents(read_corpus(specs), gp, configs, QUIET)
    options = CorpusAuditOptions(corpora=specs, pairs=pairs, out=tmp_path / "a", bootstrap=0)
    cfg = configs[0]
    options = replace(
        options,
        mode=cfg.geometry,
        k=cfg.k,
        W=opts.get("W"),
        beta=cfg.decay,
        max_distance=str(cfg.max_distance).lower(),
        boundary=cfg.boundary,
        drop_tokens=",".join(sorted(cfg.drop_tokens)) if "drop_tokens" in opts else None,
    )
    result = audit_corpus(options)
    for ctx, sc in memory.items():
        assert result.scores[ctx].counts.config == sc.counts.config
        assert_same_counts(sc.counts, result.scores[ctx].counts)


WORDS = ["he", "she", "him", "her", "doctor", "nurse", "the", "<eos>", "\n", "kind", "late", "His"]
PAIRS = parse_gender_pairs("he she\nhim her\nHis Her\n", "pairs")


@pytest.mark.filterwarnings("ignore:no word co-occurs", "ignore:untruncated infinite context")
@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join), min_size=1, max_size=12),
    cuts=st.lists(st.integers(0, 12), max_size=4),
    batch_chars=st.integers(1, 200),
    geometry=st.sampled_from(["paper", "reference"]),
    boundary=st.sampled_from(["document", "line"]),
    k=st.integers(1, 4),
    W=st.integers(3, 9),
    max_distance=st.sampled_from([None, 1, 3, 20]),
)
def test_shard_and_batch_splits_add_up(docs, cuts, batch_chars, geometry, boundary, k, W, max_distance):
    """Any cut between documents (shards) and any batch size gives the in-memory counts."""
    if geometry == "reference":
        boundary = "document"
    base = CountConfig(geometry=geometry, k=k, W=W, max_distance=max_distance, boundary=boundary)
    configs = context_configs(base, "both")
    memory = score_documents(documents_from_texts(docs), PAIRS, configs, QUIET)
    edges = sorted({0, len(docs), *(c for c in cuts if c <= len(docs))})
    total = PartialCounts(("fixed", "infinite"))
    for lo, hi in zip(edges, edges[1:]):
        total.add(count_texts(docs[lo:hi], PAIRS, configs, batch_chars))
    for cfg in configs:
        assert_same_counts(memory[cfg.context].counts, total.counts(cfg.context, cfg, PAIRS))


def test_partial_counts_round_trip(tmp_path):
    configs = context_configs(CountConfig(), "both")
    part = count_texts(["he met her", "the nurse saw his wife"], PAIRS, configs)
    part.save(tmp_path / "p.npz", {"x": 1})
    back, meta = PartialCounts.load(tmp_path / "p.npz")
    assert meta["x"] == 1
    for cfg in configs:
        assert_same_counts(part.counts(cfg.context, cfg, PAIRS), back.counts(cfg.context, cfg, PAIRS))


# ------------------------------------------------------------------------------------------------ shard files


def corpus_lines(n: int = 400) -> list[str]:
    mirror = Path(os.environ["GENDERSCOPE_DATA_MIRROR"])
    lines = (mirror / "corpora/wikitext-2/valid.txt").read_text(encoding="utf-8").split("\n")
    return [ln for ln in lines if ln.strip()][:n]


def write_jsonl(path: Path, texts: list[str], field: str = "text") -> None:
    body = "".join(json.dumps({field: t, "id": i}) + "\n" for i, t in enumerate(texts)).encode()
    if path.name.endswith(".gz"):
        body = gzip.compress(body)
    elif path.name.endswith(".zst"):
        import zstandard

        body = zstandard.ZstdCompressor().compress(body)
    path.write_bytes(body)


def test_shard_formats_equal_in_memory(tmp_path, data_registry):
    """.txt, .jsonl, .jsonl.gz, (.jsonl.zst), .parquet shards in a folder: one document per file / record."""
    texts = corpus_lines(300)
    folder = tmp_path / "corpus"
    folder.mkdir()
    names = ["a.jsonl", "b.jsonl.gz"] + (["c.jsonl.zst"] if importlib.util.find_spec("zstandard") else [])
    chunks = np.array_split(np.arange(len(texts) - 20), len(names) + 1)
    docs = []
    for name, idx in zip(names, chunks):
        write_jsonl(folder / name, [texts[i] for i in idx], field="body")
        docs += [texts[i] for i in idx]
    import pyarrow as pa
    import pyarrow.parquet as pq

    last = [texts[i] for i in chunks[-1]]
    pq.write_table(pa.table({"body": last}), folder / "d.parquet")
    docs += last
    (folder / "e.txt").write_text("\n".join(texts[-20:]) + "\n", encoding="utf-8")
    docs.append("\n".join(texts[-20:]) + "\n")
    gp = load_gender_pairs("wiki")
    memory = score_documents(documents_from_texts(docs), gp, context_configs(CountConfig(), "both"), QUIET)
    opts = CorpusAuditOptions(corpora=[str(folder)], pairs="wiki", text_field="body", out=tmp_path / "o")
    result = audit_corpus(replace(opts, bootstrap=0, batch_chars=5000, workers=2))
    for ctx, sc in memory.items():
        assert_same_counts(sc.counts, result.scores[ctx].counts)
    assert (tmp_path / "o" / "fixed" / "bias.parquet").exists()
    assert (tmp_path / "o" / "infinite" / "counts.parquet").exists()


def make_shards(folder: Path, n: int, per: int = 40) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    texts = corpus_lines(n * per)
    for s in range(n):
        write_jsonl(folder / f"part-{s:03d}.jsonl", texts[s * per : (s + 1) * per])


#: the progress line: shards done of all, tokens counted, tokens per second
PROGRESS = r"shards \d+/\d+( \(\d+ reused\))?, [\d,]+ tokens counted, ([\d.]+M tokens/s|–)"


def audit_cli(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    code = "from genderscope.cli.app import main; main()"
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "80", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", code, "bordia", "audit", *args], capture_output=True, text=True, env=full, **kw
    )


def test_bad_shards_stop_with_exit_2_or_are_skipped(tmp_path, data_registry):
    folder = tmp_path / "c"
    make_shards(folder, 3)
    (folder / "part-001.jsonl").write_text('{"text": "he said"}\n{"text": "she\n', encoding="utf-8")
    out = tmp_path / "o"
    proc = audit_cli(str(folder), "--pairs", "wiki", "--out", str(out))
    assert proc.returncode == 2
    lines = [
        ln for ln in proc.stderr.splitlines()
        if ln.strip() and not ln.startswith(("shards ", "genderscope: warning:"))
    ]
    assert len(lines) == 1 and "part-001.jsonl:2: not valid JSON" in lines[0], proc.stderr
    assert "1 finished shard's counts kept" in lines[0] and " at at " not in lines[0]
    assert "Traceback" not in proc.stderr
    # progress: shards done, tokens counted, tokens/s; the failed shard adds no line of its own
    progress = [ln.strip() for ln in proc.stderr.splitlines() if ln.startswith("shards ")]
    assert progress and all(re.fullmatch(PROGRESS, ln) for ln in progress), progress
    assert sum(ln.startswith("shards 1/3") for ln in progress) == 1, progress
    assert (out / "partials" / "0000000.npz").exists()  # the finished shard's counts are kept
    skip = audit_cli(
        str(folder), "--pairs", "wiki", "--out", str(out), "--skip-bad-shards", "--bootstrap", "0"
    )
    # rich wraps at 80 columns: a long path is cut inside (no space), words at spaces
    listed, words = skip.stdout.replace("\n", ""), " ".join(skip.stdout.split())
    assert skip.returncode == 0 and "part-001.jsonl:2:" in listed, skip.stdout + skip.stderr
    assert "not valid JSON" in words and "(2 tokens)" in words, skip.stdout
    res = json.loads((out / "results.json").read_text())["tasks"]["bordia-audit"]
    skipped = res["shards"]["skipped"]
    assert [Path(s["shard"]).name for s in skipped] == ["part-001.jsonl"] and skipped[0]["tokens"] == 2
    assert res["shards"]["reused"] == 1
    from genderscope.cli.app import app
    from typer.testing import CliRunner

    r = CliRunner().invoke(app, ["report", str(out), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "r.html").read_text()
    assert "Shards left out (--skip-bad-shards)" in html and "part-001.jsonl" in html


@pytest.mark.parametrize(
    "name,body,message",
    [
        ("x.jsonl", b'{"text": "a"}\n{"body": "b"}\n', "x.jsonl:2: record lacks field 'text'"),
        ("x.jsonl", b'{"text": "a"}\n[1, 2]\n', "x.jsonl:2: expected a JSON object"),
        ("x.jsonl.gz", gzip.compress(b'{"text": "a"}\n' * 2000, mtime=0)[:-30], "x.jsonl.gz:"),
    ],
)
def test_bad_shard_messages(tmp_path, name, body, message, data_registry):
    (tmp_path / name).write_bytes(body)
    proc = audit_cli(str(tmp_path / name), "--pairs", "wiki", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("zstandard") is None, reason="needs zstandard (the [scale] extra)"
)
def test_truncated_zst_is_a_bad_shard(tmp_path, data_registry):
    import zstandard

    (tmp_path / "x.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress(b'{"text": "a b"}\n' * 5000)[:-20]
    )
    proc = audit_cli(str(tmp_path / "x.jsonl.zst"), "--pairs", "wiki", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "x.jsonl.zst:" in proc.stderr and "truncated" in proc.stderr, proc.stderr


def test_sigkill_then_resume_recounts_only_unfinished_shards(tmp_path, data_registry):
    folder = tmp_path / "c"
    make_shards(folder, 30, per=12)
    out, fresh = tmp_path / "o", tmp_path / "fresh"
    args = [str(folder), "--pairs", "wiki", "--bootstrap", "0", "--batch-chars", "200", "--out", str(out)]
    code = "from genderscope.cli.app import main; main()"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-c", code, "bordia", "audit", *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and len(list((out / "partials").glob("*.npz"))) < 3:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = len(list((out / "partials").glob("*.npz")))
    assert 3 <= kept < 30
    opts = CorpusAuditOptions(corpora=[str(folder)], pairs="wiki", bootstrap=0, batch_chars=200, out=out)
    audit_corpus(opts)
    res = json.loads((out / "results.json").read_text())["tasks"]["bordia-audit"]
    assert res["shards"]["reused"] == kept and res["shards"]["counted"] == 30
    audit_corpus(replace(opts, out=fresh))
    for ctx in ("fixed", "infinite"):
        for table in ("counts", "bias"):
            import pyarrow.parquet as pq

            a = pq.read_table(out / ctx / f"{table}.parquet")
            b = pq.read_table(fresh / ctx / f"{table}.parquet")
            assert a.equals(b), (ctx, table)


def test_estimate_from_sampled_shards_has_intervals_over_shards(tmp_path, data_registry):
    folder = tmp_path / "c"
    make_shards(folder, 8, per=40)
    opts = CorpusAuditOptions(corpora=[str(folder)], pairs="wiki", sample_shards=4, out=tmp_path / "o")
    result = audit_corpus(replace(opts, bootstrap=50))
    assert len(result.run.counted) == 4 and result.estimate is not None
    boot = result.estimate["shard_bootstrap"]["fixed"]
    assert boot["mu"][0] <= result.scores["fixed"].bias.mu <= boot["mu"][1]
    tokens, lo, hi = result.estimate["corpus_tokens"]
    assert lo <= tokens <= hi
    assert "fixed.mu_over_shards" in result.results.metrics
    capped = audit_corpus(replace(opts, sample_shards=None, max_tokens=1, out=tmp_path / "m", bootstrap=0))
    assert len(capped.run.counted) == 1


def test_terminal_table_fits_80_columns(tmp_path, data_registry):
    make_shards(tmp_path / "c", 2, per=40)
    proc = audit_cli(
        str(tmp_path / "c"), "--pairs", "wiki", "--out", str(tmp_path / "o"), "--bootstrap", "20"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert "…" not in proc.stdout and "fixed context" in proc.stdout and "μ = mean |bias|" in proc.stdout


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="needs Ray: pip install 'genderscope[scale]'"
)
@pytest.mark.timeout(120)
def test_ray_executor_on_a_real_local_cluster(tmp_path, data_registry):
    """`ray start --head` on 127.0.0.1 plus one worker node; the same counts as the local executor."""
    from genderscope_dev.ray_cluster import local_ray_cluster

    folder = tmp_path / "c"
    make_shards(folder, 6, per=30)
    local = audit_corpus(
        CorpusAuditOptions(corpora=[str(folder)], pairs="wiki", out=tmp_path / "l", bootstrap=0)
    )
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    with local_ray_cluster(num_cpus=1, workers=1, env=env) as address:
        opts = CorpusAuditOptions(
            corpora=[str(folder)], pairs="wiki", executor="ray", ray_address=address, out=tmp_path / "r"
        )
        try:
            remote = audit_corpus(replace(opts, bootstrap=0))
        finally:
            import ray

            ray.shutdown()
    assert len(remote.run.counted) == 6
    for ctx, sc in local.scores.items():
        assert_same_counts(sc.counts, remote.scores[ctx].counts)


def test_audit_statistics_are_the_reference_corpus_of_cooccurrence_amplification(tmp_path, data_registry):
    """β against an audit's corpus statistics (``bias_stats``) equals β against the corpus counted in
    memory; statistics counted with other settings are refused."""
    from genderscope.core.engine import run_tasks

    audit_corpus(CorpusAuditOptions(corpora=["ptb:valid"], pairs="penn", out=tmp_path / "audit", bootstrap=0))
    common = {"unigram": "ptb:valid", "samples": "30", "bootstrap": "0"}
    results = {}
    for name, extra in (("memory", {}), ("stats", {"bias_stats": str(tmp_path / "audit")})):
        run_tasks(
            ["cooccurrence-amplification"],
            "random",
            options={**common, **extra},
            max_tokens=60,
            out=tmp_path / name,
            use_cache=False,
            progress=False,
        )
        doc = json.loads((tmp_path / name / "results.json").read_text())
        results[name] = doc["tasks"]["cooccurrence-amplification"]
    for key in ("fixed.beta", "infinite.beta", "fixed.corpus.mu", "infinite.corpus.sigma"):
        a, b = results["memory"]["metrics"][key]["value"], results["stats"]["metrics"][key]["value"]
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12), key
    bad = CorpusAuditOptions(corpora=["ptb:valid"], pairs="penn", k=5, out=tmp_path / "k5", bootstrap=0)
    audit_corpus(bad)
    with pytest.raises(Exception, match="k=5 \\(wanted 10\\)"):
        run_tasks(
            ["cooccurrence-amplification"],
            "random",
            options={**common, "bias_stats": str(tmp_path / "k5")},
            max_tokens=60,
            out=tmp_path / "bad",
            use_cache=False,
            progress=False,
        )


def test_report_section_of_an_audit(tmp_path, data_registry):
    from genderscope.cli.app import app
    from typer.testing import CliRunner

    folder = tmp_path / "c"
    make_shards(folder, 4, per=30)
    opts = CorpusAuditOptions(corpora=[str(folder)], pairs="wiki", sample_shards=3, out=tmp_path / "o")
    audit_corpus(replace(opts, bootstrap=20))
    r = CliRunner().invoke(app, ["report", str(tmp_path / "o"), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "r.html").read_text()
    assert "bordia-audit" in html and "Corpus audit" in html and "interval over shards" in html
    assert "Most gendered words (fixed context)" in html
