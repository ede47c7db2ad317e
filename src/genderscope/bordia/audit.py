"""Corpus audits: co-occurrence counts of a sharded corpus as a map (count a shard) and a reduce (add).

The map, :func:`count_shard`, counts one shard and writes its partial counts to
``<partials>/<index>.npz`` as soon as it finishes; the reduce, :func:`merge_partials`, adds the partial
files in shard order. The map runs on an executor: ``local`` (``workers`` processes of a
:class:`concurrent.futures.ProcessPoolExecutor`; in this process with one worker) or ``ray`` (one Ray task
per shard on a running cluster). A rerun reuses every partial file whose shard (path, size, mtime) and
counting settings are unchanged, so a killed audit recounts only unfinished shards.

Estimates: ``sample_shards`` counts a seeded random subset of shards, ``max_tokens`` stops starting shards
(taken in the same seeded order) once that many tokens are counted; :func:`shard_bootstrap` gives
intervals over shards for μ and σ.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from genderscope.bordia.bias import ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig
from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.shards import Shard, ShardError, shard_documents, tally_tokens
from genderscope.bordia.stream import DEFAULT_BATCH_CHARS, PartialCounts, check_configs, count_texts
from genderscope.common.errors import UsageError
from genderscope.stats.bootstrap import NUMPY, count_matrix

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class CountPlan:
    """What every shard is counted with (sent to each worker): pairs, configs, text field, partials folder."""

    pairs: GenderPairs
    configs: tuple[CountConfig, ...]
    partials: str
    text_field: str = "text"
    batch_chars: int = DEFAULT_BATCH_CHARS

    def fingerprint(self) -> str:
        """sha256 of the settings that change a shard's counts."""
        blob = {
            "pairs": self.pairs.describe(),
            "configs": [c.describe() for c in self.configs],
            "text_field": self.text_field,
            # float (infinite-context) sums depend on the batches' order of addition in their last bits
            "batch_chars": self.batch_chars,
        }
        return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()

    def partial_path(self, shard: Shard) -> Path:
        return Path(self.partials) / f"{shard.index:07d}.npz"


@dataclass
class ShardOutcome:
    """One shard's map result: tokens counted and seconds, or the error (and tokens the shard held)."""

    index: int
    tokens: int = 0
    seconds: float = 0.0
    error: Optional[str] = None
    reused: bool = False
    cpu_seconds: float = 0.0


def count_shard(plan: CountPlan, shard: Shard) -> ShardOutcome:
    """Count one shard and write its partial counts (the map step; runs in a worker)."""
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        texts = (text for _, text in shard_documents(shard, plan.text_field))
        acc = count_texts(texts, plan.pairs, plan.configs, plan.batch_chars)
    except ShardError as exc:
        return ShardOutcome(
            shard.index, tally_tokens(shard, plan.text_field), time.perf_counter() - t0, str(exc)
        )
    meta = {"shard": shard.identity(), "fingerprint": plan.fingerprint()}
    acc.save(plan.partial_path(shard), meta)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return ShardOutcome(shard.index, acc.totals["n_tokens"], wall, cpu_seconds=cpu)


def finished(plan: CountPlan, shard: Shard) -> Optional[int]:
    """Tokens of ``shard``'s partial file when it exists and matches the shard and the plan, else None."""
    path = plan.partial_path(shard)
    if not path.exists():
        return None
    try:
        with np.load(path) as z:
            meta = json.loads(z["meta"].tobytes().decode())
    except Exception:  # a torn or foreign file: count the shard again
        return None
    if meta.get("fingerprint") != plan.fingerprint() or meta.get("shard") != shard.identity():
        return None
    return int(meta["totals"]["n_tokens"])


# ------------------------------------------------------------------------------------------------ executors


class _Inline:
    """One worker, in this process."""

    def __init__(self, plan: CountPlan):
        self.plan, self.queue = plan, []  # type: ignore[var-annotated]

    capacity = 1

    def submit(self, shard: Shard) -> None:
        self.queue.append(shard)

    def next_done(self) -> ShardOutcome:
        return count_shard(self.plan, self.queue.pop(0))

    def close(self) -> None:
        self.queue.clear()


class _Processes:
    """``workers`` local processes."""

    def __init__(self, plan: CountPlan, workers: int):
        self.plan, self.capacity = plan, workers
        self.pool = ProcessPoolExecutor(max_workers=workers)
        self.running: set[Future] = set()

    def submit(self, shard: Shard) -> None:
        self.running.add(self.pool.submit(count_shard, self.plan, shard))

    def next_done(self) -> ShardOutcome:
        done, _ = wait(self.running, return_when=FIRST_COMPLETED)
        fut = next(iter(done))
        self.running.discard(fut)
        return fut.result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class _Ray:
    """One Ray task per shard on the cluster at ``address`` (None: ``RAY_ADDRESS`` or a new local one)."""

    def __init__(self, plan: CountPlan, address: Optional[str], workers: int):
        try:
            import ray
        except ImportError:
            raise UsageError("--executor ray needs Ray: pip install 'genderscope[scale]'") from None
        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False, include_dashboard=False)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.capacity = max(1, workers if workers > 1 else 2 * cpus)
        self.remote = ray.remote(num_cpus=1, max_retries=0)(count_shard)
        self.plan_ref = ray.put(plan)
        self.running: list[Any] = []

    def submit(self, shard: Shard) -> None:
        self.running.append(self.remote.remote(self.plan_ref, shard))

    def next_done(self) -> ShardOutcome:
        done, self.running = self.ray.wait(self.running, num_returns=1)
        return self.ray.get(done[0])

    def close(self) -> None:
        for ref in self.running:
            self.ray.cancel(ref)
        self.running = []


# ------------------------------------------------------------------------------------------------ driver


@dataclass
class Progress:
    """What a progress callback sees after every finished shard."""

    done: int
    total: int
    tokens: int
    seconds: float
    reused: int = 0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else math.nan


@dataclass
class AuditRun:
    """The map's outcome: shards counted (in corpus order), reused, skipped (bad, with tokens), failed."""

    shards: list[Shard]
    counted: list[ShardOutcome] = field(default_factory=list)
    skipped: list[ShardOutcome] = field(default_factory=list)
    failed: Optional[ShardOutcome] = None
    seconds: float = 0.0

    def done_shards(self) -> list[Shard]:
        ok = {o.index for o in self.counted}
        return [s for s in self.shards if s.index in ok]

    @property
    def tokens(self) -> int:
        return sum(o.tokens for o in self.counted)


def shard_order(shards: Sequence[Shard], seed: int) -> list[Shard]:
    """The seeded random order in which estimates take shards."""
    order = list(shards)
    random.Random(seed).shuffle(order)
    return order


def run_map(
    shards: Sequence[Shard],
    plan: CountPlan,
    executor: str = "local",
    workers: int = 1,
    skip_bad_shards: bool = False,
    max_tokens: Optional[int] = None,
    ray_address: Optional[str] = None,
    progress: Optional[Callable[[Progress], None]] = None,
) -> AuditRun:
    """Count every shard not already counted (resume), in order; stop starting shards after a bad one
    (unless ``skip_bad_shards``) or once ``max_tokens`` are counted. Finished shards' counts stay on disk."""
    if executor not in EXECUTORS:
        raise UsageError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if workers < 1:
        raise UsageError(f"--workers must be ≥ 1, got {workers}")
    t0 = time.perf_counter()
    run = AuditRun(list(shards))
    todo: list[Shard] = []
    for s in shards:
        n = finished(plan, s)
        if n is None:
            todo.append(s)
        else:
            run.counted.append(ShardOutcome(s.index, n, reused=True))
    counted_tokens = 0
    n_reused = len(run.counted)

    def report() -> None:
        if progress:
            done = len(run.counted) + len(run.skipped)
            progress(Progress(done, len(shards), counted_tokens, time.perf_counter() - t0, n_reused))

    reused_tokens = sum(o.tokens for o in run.counted)
    if max_tokens is not None and reused_tokens >= max_tokens:
        todo = []
    report()
    if todo:
        if executor == "ray":
            pool: Any = _Ray(plan, ray_address, workers)
        else:
            pool = _Inline(plan) if workers == 1 else _Processes(plan, workers)
        inflight, stop = 0, False
        try:
            while todo or inflight:
                while todo and not stop and inflight < pool.capacity:
                    pool.submit(todo.pop(0))
                    inflight += 1
                if not inflight:
                    break
                out = pool.next_done()
                inflight -= 1
                if out.error is None:
                    run.counted.append(out)
                    counted_tokens += out.tokens
                    if max_tokens is not None and reused_tokens + counted_tokens >= max_tokens:
                        stop = True
                elif skip_bad_shards:
                    run.skipped.append(out)
                else:
                    run.failed = run.failed or out
                    stop = True
                if out.error is None or skip_bad_shards:  # a failed shard advances nothing: no new line
                    report()
                if stop:
                    todo = []
        finally:
            pool.close()
    order = {s.index: i for i, s in enumerate(shards)}
    run.counted.sort(key=lambda o: order[o.index])
    run.skipped.sort(key=lambda o: order[o.index])
    run.seconds = time.perf_counter() - t0
    return run


def merge_partials(plan: CountPlan, shards: Sequence[Shard]) -> PartialCounts:
    """The reduce: add the partial counts of ``shards`` in corpus order."""
    configs = check_configs(plan.configs)
    acc = PartialCounts(tuple(c.context for c in configs))
    for shard in sorted(shards, key=lambda s: s.index):
        part, _ = PartialCounts.load(plan.partial_path(shard))
        acc.add(part)
    return acc


def shard_bootstrap(
    plan: CountPlan,
    shards: Sequence[Shard],
    options: ScoreOptions,
    n_resamples: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, dict[str, tuple[float, float]]]:
    """Percentile intervals of μ and σ (per context) and of tokens per shard, resampling whole shards
    with replacement: the spread an estimate from these shards has over other draws of shards."""
    configs = check_configs(plan.configs)
    parts = [PartialCounts.load(plan.partial_path(s))[0] for s in sorted(shards, key=lambda s: s.index)]
    nan = (math.nan, math.nan)
    if len(parts) < 2 or n_resamples <= 0:
        return {c.context: {"mu": nan, "sigma": nan} for c in configs} | {"tokens_per_shard": {"mean": nan}}
    union = PartialCounts(tuple(c.context for c in configs))
    for part in parts:
        union.add(part)
    gids = [np.fromiter((union.index[t] for t in p.types), np.int64, count=p.n_types) for p in parts]
    # whole shards drawn with replacement through the statistics core (numpy generator, ``seed``): row b
    # holds how often each shard is in resample b
    draws = list(count_matrix(len(parts), n_resamples, seed, rng=NUMPY).astype(np.int64))
    quiet = replace(options, bootstrap=0)
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    out: dict[str, dict[str, tuple[float, float]]] = {}
    n = union.n_types
    for cfg in configs:
        ctx, stats = cfg.context, []
        for w in draws:
            acc = PartialCounts((ctx,), union.types, union.index)
            acc.freq = np.zeros(n, np.int64)
            acc.male[ctx] = np.zeros(n, union.male[ctx].dtype)
            acc.female[ctx] = np.zeros(n, union.female[ctx].dtype)
            acc.keys[ctx] = union.keys[ctx][:n]
            for part, g, k in zip(parts, gids, w.tolist()):
                if k:
                    acc.freq[g] += k * part.freq
                    acc.male[ctx][g] += k * part.male[ctx]
                    acc.female[ctx][g] += k * part.female[ctx]
                    for name, v in part.totals.items():
                        acc.totals[name] += k * v
            b = bias_scores(acc.counts(ctx, cfg, plan.pairs), quiet)
            stats.append((b.summary["mu"], b.summary["sigma"]))
        arr = np.asarray(stats, dtype=np.float64)
        out[ctx] = {
            "mu": tuple(np.nanpercentile(arr[:, 0], [lo_q, hi_q]).tolist()),  # type: ignore[dict-item]
            "sigma": tuple(np.nanpercentile(arr[:, 1], [lo_q, hi_q]).tolist()),  # type: ignore[dict-item]
        }
    tokens = np.array([p.totals["n_tokens"] for p in parts], dtype=np.float64)
    means = [float((tokens * w).sum() / len(parts)) for w in draws]
    out["tokens_per_shard"] = {"mean": tuple(np.percentile(means, [lo_q, hi_q]).tolist())}  # type: ignore[dict-item]
    return out
