"""winobias-adjectives: (a) a full live run against the loopback OpenAI server, (b) the table from a replay.

(a) All 16 prompt sets x pro/anti x 5 trials at HEAD (16 x 2 x 396 x 5 = 63,360 prompts) through
    ``run_tasks`` (store on, fresh GENDERSCOPE_HOME) against ``genderscope_dev.fake_openai`` in its
    own process with 50 ms latency.  Reports prompts/s, the ratio to the latency-bound ideal
    (concurrency / 0.05 s) and to one-at-a-time requests (1 / 0.05 s), and client CPU per request
    (os.times of this process: task, runner, store, backend, scoring, writing; not the server).
(b) The whole table from the recorded attempts.jsonl via ``replay:`` (no model): wall and CPU seconds of
    the complete run (load, parse 63,360 replies with both parsers, statistics with 10,000 bootstrap
    replicates, write results.json/attempts.jsonl/run.json) against the 10 s budget, and the scoring
    step alone.

    .venv/bin/python benchmarks/bench_winobias_adjectives.py                 # full (63,360 prompts)
    .venv/bin/python benchmarks/bench_winobias_adjectives.py --limit 40      # quick: 40 pairs
    .venv/bin/python benchmarks/bench_winobias_adjectives.py --recorded RUN/attempts.jsonl   # (b) only
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")

LATENCY = 0.05
BUDGET_S = 10.0


def clock() -> tuple[float, float]:
    t = os.times()
    return time.perf_counter(), t.user + t.system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--limit", type=int, default=None, help="pairs per prompt set (default: all 396)")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument(
        "--recorded",
        type=Path,
        default=None,
        help="skip (a) and replay this recorded attempts.jsonl (a full default run) for (b)",
    )
    args = ap.parse_args()

    home = tempfile.mkdtemp(prefix="gs-bench-wba-")
    os.environ["GENDERSCOPE_HOME"] = home
    from genderscope.core.engine import run_tasks
    from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIProcess

    import genderscope.tasks.winobias_adjectives.task  # noqa: F401  (imports outside the timings)
    import scipy.stats  # noqa: F401

    task = "winobias-adjectives"
    out = Path(home) / "runs"
    common = dict(trials=args.trials, limit=args.limit, progress=False)
    if args.recorded is not None:
        replay_table(task, args.recorded, out / "replay", common, None)
        return
    with FakeOpenAIProcess(FakeConfig(latency=LATENCY)) as srv:
        w0, c0 = clock()
        live = run_tasks(
            [task],
            "openai:fake-chat",
            out=out / "live",
            options={"base_url": srv.url, "concurrency": str(args.concurrency)},
            **common,
        )
        w1, c1 = clock()
        served = srv.stats()["requests"]
    n = live.runs[0].counts.attempts
    sent = live.runs[0].counts.requests
    rate = n / (w1 - w0)
    ideal = args.concurrency / LATENCY
    print(
        f"(a) live run against the loopback server ({LATENCY * 1000:.0f} ms latency, concurrency "
        f"{args.concurrency}): {n:,} prompts ({sent:,} sent, server saw {served:,})"
    )
    print(
        f"    wall {w1 - w0:.1f} s -> {rate:,.0f} prompts/s; latency-bound ideal {ideal:,.0f}/s "
        f"(ratio {rate / ideal:.2f}); one-at-a-time {1 / LATENCY:.0f}/s (speed-up x{rate * LATENCY:.0f})"
    )
    print(
        f"    client CPU {c1 - c0:.1f} s = {1e6 * (c1 - c0) / n:.0f} µs per request "
        f"(task build + runner + store + HTTP client + scoring + writing)"
    )

    replay_table(task, out / "live" / "attempts.jsonl", out / "replay", common, (live, w1 - w0))
    sys.stdout.flush()


def replay_table(task: str, recorded: Path, out: Path, common: dict, live: tuple | None) -> None:
    from genderscope.core.engine import run_tasks

    w2, c2 = clock()
    rep = run_tasks([task], f"replay:{recorded}", out=out, **common)
    w3, c3 = clock()
    n = rep.runs[0].counts.attempts
    line = (
        f"(b) whole table from the replayed run ({n:,} attempts, no model; load + parse + stats + "
        f"write): wall {w3 - w2:.2f} s, CPU {c3 - c2:.2f} s; budget {BUDGET_S:.0f} s -> "
        f"{(w3 - w2) / BUDGET_S:.2f} of budget"
    )
    if live is not None:
        same = [r["bias"] for r in rep.runs[0].result.extra["summary"]] == [
            r["bias"] for r in live[0].runs[0].result.extra["summary"]
        ]
        line += f"; replay/live wall ratio {(w3 - w2) / live[1]:.2f}; identical biases: {same}"
    print(line)
    w4, c4 = clock()
    t = rep.runs[0].task
    t.score(rep.runs[0].results)
    w5, c5 = clock()
    print(
        f"    scoring step alone (both parsers on {n:,} replies, Welch/Holm/replicate tests, "
        f"{t.options.bootstrap_samples:,} bootstrap replicates): {w5 - w4:.2f} s wall, {c5 - c4:.2f} s CPU "
        f"({1e6 * (c5 - c4) / n:.0f} µs per reply); load average now {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
