"""`bordia audit` in bounded memory whatever the corpus looks like, at native speed (issue 43), against
today's code in the same run.

The corpus is synthetic and deterministic: documents of 1–16 lines drawn (NumPy PCG64, ``--seed``) from the
non-blank lines of the mirror's WikiText-2 and PTB valid/test files, in three layouts of the same text:

* ``64 shards`` — 64 JSONL shards, one document per record;
* ``one .txt`` — the records' texts in one plain-text file (one document: the layout of WikiText-103, PTB);
* ``one .jsonl.zst`` — the 64 shards' records in one zstd-compressed JSONL file.

Every audit runs in a fresh process (``resource`` reports its peak RSS and its pool workers'), both
contexts, wiki pairs, bootstrap off. Rows: this code; today's code (``--baseline``, a git ref, checked out
with ``git archive`` into the work folder) for sizes up to ``--baseline-up-to``; today's ``bordia score``
on the ``.txt`` up to ``--score-up-to``; a killed-and-resumed ``.txt`` run (SIGKILL once a third of its
byte ranges are written, then the same command again) and ``.jsonl.zst`` run (SIGKILL after its state
was saved twice) compared with the uninterrupted ones. Count checks:
the 64 shards and the ``.jsonl.zst`` hold the same documents (identical integer counts, float counts to a
relative 1e-12 with the same zeros); the ``.txt`` equals ``bordia score`` on it and today's audit of it;
with ``--boundary line`` (``--line-check``) all three layouts give the same per-word counts.

Columns: tokens; wall seconds; M tokens per CPU-second of every process (imports, reading, counting,
reduce, scoring, writing: the per-core figure); ``count/cpu``: M tokens per CPU-second of the map alone
(read + count + write a unit, summed over units); peak RSS of the largest process. ``uptime`` is printed
first and last: on a busy machine wall time means little, CPU seconds are the per-core figure.

Run (what a busy machine allows)::

    GENDERSCOPE_DATA_MIRROR=../shared/data PYTHONPATH=src .venv/bin/python \\
        benchmarks/bench_corpus_stream.py --tokens 8M --line-check

The issue's full table (a quiet machine: ~17 GB in the work folder for the 1 B corpora, deleted after)::

    GENDERSCOPE_DATA_MIRROR=../shared/data PYTHONPATH=src .venv/bin/python \\
        benchmarks/bench_corpus_stream.py --tokens 8M,128M,1G --line-check

Sizes above 8M are skipped while the 1-minute load average is above ``--max-load`` (1.5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (
    "corpora/wikitext-2/valid.txt",
    "corpora/wikitext-2/test.txt",
    "corpora/ptb/ptb.valid.txt",
    "corpora/ptb/ptb.test.txt",
)
BASELINE = "0ac5e3d"  # the code before issue 43 ("today's code")
LAYOUTS = ("64 shards", "one .txt", "one .jsonl.zst")

RUNNER = r"""
import json, resource, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
from genderscope.commands.bordia.audit import audit_corpus
from genderscope.commands.bordia.options import CorpusAuditOptions
a = json.loads(sys.argv[1])
t0 = time.perf_counter()
kw = dict(corpora=[a["corpus"]], pairs="wiki", bootstrap=0, out=Path(a["out"]), workers=a["workers"],
          fresh=a.get("fresh", True), **a.get("extra", {}))
r = audit_corpus(CorpusAuditOptions(**kw))
wall = time.perf_counter() - t0
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
tp = r.results.extra["throughput"]
print(json.dumps({"wall": wall, "tokens": r.scores["fixed"].counts.n_tokens,
    "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
    "rss_mb": max(me.ru_maxrss, kids.ru_maxrss) / 1024,
    "count_per_cpu_s": tp.get("tokens_per_cpu_second_per_worker"),
    "ranges": r.results.extra.get("ranges")}))
"""

SCORE = r"""
import json, resource, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
from genderscope.commands.bordia.score import score_corpus
from genderscope.commands.bordia.options import CorpusScoreOptions
a = json.loads(sys.argv[1])
t0 = time.perf_counter()
kw = {"max_bytes": 0} if "max_bytes" in CorpusScoreOptions.__dataclass_fields__ else {}
o = CorpusScoreOptions(corpora=[a["corpus"]], pairs="wiki", bootstrap=0, out=Path(a["out"]), **kw)
s = score_corpus(o)
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": time.perf_counter() - t0, "tokens": s["fixed"].counts.n_tokens,
    "cpu": me.ru_utime + me.ru_stime, "rss_mb": me.ru_maxrss / 1024, "count_per_cpu_s": None}))
"""


def parse_size(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 10**3, "M": 10**6, "G": 10**9}.get(s[-1], 1)
    return int(float(s[:-1] if s[-1] in "KMG" else s) * mult)


def label(n: int) -> str:
    return f"{n / 1e9:g} B" if n >= 10**9 else f"{n / 1e6:g} M"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def load1() -> float:
    return os.getloadavg()[0]


# ------------------------------------------------------------------------------------------------ corpora


def build_shards(folder: Path, n_tokens: int, shards: int, seed: int) -> Path:
    """JSONL shards of resampled WikiText-2/PTB lines, ``n_tokens`` whitespace tokens in all (cached)."""
    marker = folder.with_name(folder.name + ".done")  # outside the folder: a file in it would be a shard
    if marker.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    mirror = Path(os.environ["GENDERSCOPE_DATA_MIRROR"])
    lines = [
        ln for src in SOURCES for ln in (mirror / src).read_text(encoding="utf-8").split("\n") if ln.strip()
    ]
    encoded = [json.dumps(ln)[1:-1] for ln in lines]  # JSON string bodies, joined by an escaped newline
    lengths = np.array([len(ln.split()) for ln in lines], dtype=np.int64)
    rng = np.random.default_rng(seed)
    per_shard = n_tokens // shards
    for s in range(shards):
        target = per_shard if s < shards - 1 else n_tokens - per_shard * (shards - 1)
        with open(folder / f"shard-{s:05d}.jsonl", "w", encoding="utf-8") as fh:
            done = 0
            while done < target:
                picks = rng.integers(0, len(lines), size=(4096, 16))
                sizes = rng.integers(1, 17, size=4096)
                out = []
                for row, k in zip(picks, sizes):
                    idx = row[:k]
                    out.append('{"text": "' + "\\n".join(encoded[i] for i in idx) + '"}\n')
                    done += int(lengths[idx].sum())
                    if done >= target:
                        break
                fh.write("".join(out))
    marker.write_text("ok\n")
    return folder


def derive_layouts(shards: Path, root: Path) -> dict[str, Path]:
    """The same records as one .txt (texts joined by newlines: one document) and one .jsonl.zst."""
    import zstandard

    txt, zst = root / "corpus.txt", root / "corpus.jsonl.zst"
    if not txt.exists() or not zst.exists():
        cctx = zstandard.ZstdCompressor(level=3)
        with open(txt, "w", encoding="utf-8") as out_txt, open(zst, "wb") as raw:
            with cctx.stream_writer(raw) as out_zst:
                for shard in sorted(shards.glob("*.jsonl")):
                    with open(shard, "rb") as fh:
                        for line in fh:
                            out_zst.write(line)
                            out_txt.write(json.loads(line)["text"] + "\n")
    return {"64 shards": shards, "one .txt": txt, "one .jsonl.zst": zst}


def baseline_src(ref: str, workdir: Path) -> Path:
    """Today's code: ``src/`` of git ``ref`` (git archive), for PYTHONPATH."""
    dest = workdir / f"baseline-{ref}"
    if not (dest / "src").exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest / "src"


# ------------------------------------------------------------------------------------------------ runs


def run(src: Path, script: str, arg: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps(arg)], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        sys.exit(f"run failed: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def range_bytes(corpus: Path) -> int:
    """--range-bytes of the single files: 64 MiB, but at least 16 ranges (or saves of a compressed file's
    state) so that a small corpus is split too."""
    return min(1 << 26, -(-corpus.stat().st_size // 16))


def kill_and_resume(src: Path, corpus: Path, out: Path, workers: int) -> dict:
    """SIGKILL the audit once a third of its byte ranges are written (a compressed file: once its state was
    saved twice), rerun it; the rerun's figures."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = "from genderscope.cli.app import main; main()"
    rb = range_bytes(corpus)
    cmd = [sys.executable, "-c", code, "bordia", "audit", str(corpus), "--pairs", "wiki", "--bootstrap", "0"]
    cmd += ["--workers", str(workers), "--range-bytes", str(rb), "--out", str(out)]
    n_ranges = -(-corpus.stat().st_size // rb)
    resume, saves, seen = out / "partials" / "0000000.resume", 0, None
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        if corpus.suffix == ".zst":
            stamp = resume.stat().st_mtime_ns if resume.exists() else None
            saves, seen = saves + (stamp is not None and stamp != seen), stamp
            if saves >= 2:
                break
        elif len(list((out / "partials").glob("*.r*.npz"))) >= max(1, n_ranges // 3):
            break
        time.sleep(0.02)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = len(list((out / "partials").glob("*.r*.npz"))) if corpus.suffix != ".zst" else saves
    arg = {
        "corpus": str(corpus),
        "out": str(out),
        "workers": workers,
        "fresh": False,
        "extra": {"range_bytes": rb},
    }
    r = run(src, RUNNER, arg)
    r["kept"] = kept
    return r


def tables(folder: Path) -> dict[str, dict[str, np.ndarray | list]]:
    """Per context: word, freq, male, female of an audit (Parquet) or a score (TSV) folder."""
    out = {}
    for ctx in ("fixed", "infinite"):
        pq_path, tsv = folder / ctx / "counts.parquet", folder / ctx / "counts.tsv"
        if pq_path.exists():
            import pyarrow.parquet as pq

            t = pq.read_table(pq_path).to_pydict()
        else:
            rows = [ln.split("\t") for ln in tsv.read_text(encoding="utf-8").splitlines()[1:]]
            t = {"word": [r[0] for r in rows], "freq": [int(r[1]) for r in rows]}
            cast = int if ctx == "fixed" else float
            t["male"], t["female"] = [cast(r[2]) for r in rows], [cast(r[3]) for r in rows]
        out[ctx] = {"word": list(t["word"]), **{k: np.asarray(t[k]) for k in ("freq", "male", "female")}}
    return out


def same_counts(a: Path, b: Path) -> str:
    """``identical``, ``≤1e-12`` (float counts to a relative 1e-12, same zeros, integers identical) or
    ``DIFFERENT``."""
    ta, tb = tables(a), tables(b)
    exact = True
    for ctx in ("fixed", "infinite"):
        x, y = ta[ctx], tb[ctx]
        if x["word"] != y["word"] or not np.array_equal(x["freq"], y["freq"]):
            return "DIFFERENT"
        for k in ("male", "female"):
            if np.array_equal(x[k], y[k]):
                continue
            exact = False
            if ctx == "fixed" or not np.array_equal(x[k] == 0, y[k] == 0):
                return "DIFFERENT"
            if not np.allclose(x[k], y[k], rtol=1e-12, atol=0):
                return "DIFFERENT"
    return "identical" if exact else "≤1e-12"


HEAD = (
    f"{'layout':<15} {'tokens':>6} {'code':<16} {'wall s':>7} {'Mtok/cpu-s':>10} {'count/cpu':>9} "
    f"{'peak MB':>8}  counts"
)


def row(layout: str, n: int, code: str, r: dict, check: str) -> str:
    per_cpu = r["tokens"] / r["cpu"] / 1e6
    cc = f"{r['count_per_cpu_s'] / 1e6:.2f}" if r.get("count_per_cpu_s") else "–"
    head = f"{layout:<15} {label(n):>6} {code:<16} {r['wall']:>7.1f} {per_cpu:>10.2f} {cc:>9}"
    return f"{head} {r['rss_mb']:>8.0f}  {check}"


def bench_size(args: argparse.Namespace, n: int, base: Path | None) -> list[str]:
    root = args.workdir / f"tokens-{n}"
    shards = build_shards(root / "shards", n, 64, args.seed)
    layouts = derive_layouts(shards, root)
    here, lines = ROOT / "src", []
    outs: dict[str, Path] = {}
    for name in args.layouts:
        corpus, out = layouts[name], root / f"out-{name.replace(' ', '_')}"
        extra = {"range_bytes": range_bytes(corpus)} if name != "64 shards" else {}
        r = run(
            here, RUNNER, {"corpus": str(corpus), "out": str(out), "workers": args.workers, "extra": extra}
        )
        outs[name] = out
        check = ""
        if name == "one .jsonl.zst" and "64 shards" in outs:
            check = f"{same_counts(outs['64 shards'], out)} vs 64 shards"
        lines.append(row(name, n, "this code", r, check))
        print(lines[-1], flush=True)
        if base is not None and n <= args.baseline_up_to:
            old_out = root / f"old-{name.replace(' ', '_')}"
            r0 = run(base, RUNNER, {"corpus": str(corpus), "out": str(old_out), "workers": args.workers})
            lines.append(
                row(name, n, f"today {args.baseline}", r0, f"{same_counts(out, old_out)} vs this code")
            )
            print(lines[-1], flush=True)
        if name == "one .txt" and base is not None and n <= args.score_up_to:
            s_out = root / "old-score"
            r0 = run(base, SCORE, {"corpus": str(corpus), "out": str(s_out)})
            lines.append(row(name, n, "today's score", r0, f"{same_counts(out, s_out)} vs this code"))
            print(lines[-1], flush=True)
        if name != "64 shards" and args.kill_resume:
            k_out = root / f"killed-{name.replace(' ', '_')}"
            rk = kill_and_resume(here, corpus, k_out, args.workers)
            if name == "one .txt":
                what = f"killed with {rk['kept']}/{(rk.get('ranges') or {}).get('total')} ranges written"
            else:
                what = f"killed after {rk['kept']} saves of its state"
            check = f"{same_counts(out, k_out)} vs uninterrupted ({what})"
            lines.append(row(name, n, "kill + resume", rk, check))
            print(lines[-1], flush=True)
    if args.line_check and n <= args.baseline_up_to:
        line_outs = []
        for name in args.layouts:
            out = root / f"line-{name.replace(' ', '_')}"
            extra = {"boundary": "line"}
            run(
                here,
                RUNNER,
                {"corpus": str(layouts[name]), "out": str(out), "workers": args.workers, "extra": extra},
            )
            line_outs.append(out)
        checks = [same_counts(line_outs[0], o) for o in line_outs[1:]]
        lines.append(
            f"--boundary line, {label(n)}: per-word counts of {', '.join(args.layouts)}: {', '.join(checks)}"
        )
        print(lines[-1], flush=True)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", default="8M", help="corpus sizes (K/M/G suffixes), e.g. 8M,128M,1G")
    ap.add_argument("--layouts", default=",".join(LAYOUTS), help="comma list of " + ", ".join(LAYOUTS))
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--baseline", default=BASELINE, help="git ref of today's code ('' = no comparison)")
    ap.add_argument("--baseline-up-to", default="8M", help="largest size run with today's code too")
    ap.add_argument("--score-up-to", default="8M", help="largest size run with today's bordia score too")
    ap.add_argument("--no-kill-resume", dest="kill_resume", action="store_false")
    ap.add_argument("--line-check", action="store_true", help="also compare the layouts with --boundary line")
    ap.add_argument("--max-load", type=float, default=1.5, help="skip sizes above 8M while load is higher")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/genderscope-bench-corpus-43"))
    ap.add_argument("--keep", action="store_true", help="keep the generated corpora")
    args = ap.parse_args()
    args.layouts = [x.strip() for x in args.layouts.split(",")]
    args.baseline_up_to, args.score_up_to = parse_size(args.baseline_up_to), parse_size(args.score_up_to)
    print("uptime:", uptime())
    print(f"nproc: {os.cpu_count()}; date: {time.strftime('%Y-%m-%d %H:%M %Z')}")
    base = baseline_src(args.baseline, args.workdir) if args.baseline else None
    print(HEAD)
    for n in sorted(parse_size(s) for s in args.tokens.split(",")):
        if n > 8_000_000 and load1() > args.max_load:
            print(f"{label(n)}: skipped, load {load1():.2f} > {args.max_load} (left for a quiet machine)")
            continue
        bench_size(args, n, base)
    print("uptime:", uptime())


if __name__ == "__main__":
    main()
