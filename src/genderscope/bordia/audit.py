"""Corpus audits: co-occurrence counts of a sharded corpus as a map (count a unit) and a reduce (add).

A unit is a shard, or a byte range of a large uncompressed text or JSONL shard (``range_bytes``,
:mod:`genderscope.bordia.ranges`). The map, :func:`count_unit`, counts one unit in bounded memory
(:class:`~genderscope.bordia.counter.StreamCounter`) and writes its partial counts to
``<partials>/<shard>.npz`` (``<shard>.r<range>.npz`` for ranges) as soon as it finishes; the reduce,
:func:`merge_partials`, adds the partial files in corpus order and joins the ranges of a shard at their
seams (:class:`~genderscope.bordia.counter.SeamJoiner`). The map runs on an executor: ``local``
(``workers`` processes of a :class:`concurrent.futures.ProcessPoolExecutor`; in this process with one
worker) or ``ray`` (one Ray task per unit on a running cluster). A rerun reuses every partial file whose
shard (path, size, mtime), range and counting settings are unchanged, so a killed audit recounts only
unfinished units: at most one byte range per worker of a single large file.

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
from genderscope.bordia.counter import Seam, SeamJoiner, StreamCounter
from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.ranges import Checkpointer, Unit, compression, plan_ranges
from genderscope.bordia.ranges import count_unit as read_unit
from genderscope.bordia.shards import Shard, ShardError, tally_tokens
from genderscope.bordia.stream import DEFAULT_BATCH_CHARS, PartialCounts, check_configs
from genderscope.common.errors import UsageError
from genderscope.stats.bootstrap import NUMPY, count_matrix

EXECUTORS = ("local", "ray")
#: byte ranges of a large uncompressed text or JSONL shard (resume and parallelism inside one file)
DEFAULT_RANGE_BYTES = 1 << 26
ENGINE = "native-1"  # partial files of another engine are recounted


@dataclass(frozen=True)
class CountPlan:
    """What every unit is counted with (sent to each worker): pairs, configs, text field, partials folder,
    piece size (``batch_chars`` bytes) and range size."""

    pairs: GenderPairs
    configs: tuple[CountConfig, ...]
    partials: str
    text_field: str = "text"
    batch_chars: int = DEFAULT_BATCH_CHARS
    range_bytes: int = DEFAULT_RANGE_BYTES

    def fingerprint(self) -> str:
        """sha256 of the settings that change a unit's counts."""
        blob = {
            "pairs": self.pairs.describe(),
            "configs": [c.describe() for c in self.configs],
            "text_field": self.text_field,
            # float (infinite-context) sums depend on the pieces' order of addition in their last bits
            "batch_chars": self.batch_chars,
            "range_bytes": self.range_bytes,
            "engine": ENGINE,
        }
        return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()

    def partial_path(self, unit: Unit | Shard) -> Path:
        if isinstance(unit, Shard) or unit.whole:
            index = unit.index if isinstance(unit, Shard) else unit.shard.index
            return Path(self.partials) / f"{index:07d}.npz"
        return Path(self.partials) / f"{unit.shard.index:07d}.r{unit.part:05d}.npz"

    def units(self, shard: Shard) -> list[Unit]:
        """The units of a shard: itself, or its byte ranges."""
        spans = plan_ranges(shard, self.range_bytes)
        return [Unit(shard, i, len(spans), a, b) for i, (a, b) in enumerate(spans)]


@dataclass
class ShardOutcome:
    """One shard's (or unit's) map result: tokens counted and seconds, or the error (and tokens the shard
    held)."""

    index: int
    tokens: int = 0
    seconds: float = 0.0
    error: Optional[str] = None
    reused: bool = False
    cpu_seconds: float = 0.0
    part: int = 0


def count_unit(plan: CountPlan, unit: Unit) -> ShardOutcome:
    """Count one unit and write its partial counts (the map step; runs in a worker)."""
    t0, c0 = time.perf_counter(), time.process_time()
    shard = unit.shard
    configs = check_configs(plan.configs)
    checkpoint = None
    if unit.whole and compression(shard.path):  # read from its start: save the state now and then
        key = {"shard": shard.identity(), "fingerprint": plan.fingerprint()}
        path = Path(plan.partials) / f"{shard.index:07d}.resume"
        path.parent.mkdir(parents=True, exist_ok=True)
        checkpoint = Checkpointer(path, key, plan.range_bytes)
    try:
        counter = read_unit(
            lambda in_doc, in_seg: StreamCounter(plan.pairs, configs, in_doc, in_seg),
            unit,
            plan.text_field,
            plan.batch_chars,
            configs[0].boundary == "line",
            checkpoint,
        )
    except ShardError as exc:
        tokens = tally_tokens(shard, plan.text_field)
        return ShardOutcome(shard.index, tokens, time.perf_counter() - t0, str(exc), part=unit.part)
    part, seam = counter.result()
    meta = {
        "shard": shard.identity(),
        "fingerprint": plan.fingerprint(),
        "range": [unit.start, unit.end, unit.part, unit.parts],
        "seam": seam.meta() if seam is not None else None,
        "resumed_from": counter.resumed_from,
    }
    part.save(plan.partial_path(unit), meta, seam.arrays() if seam is not None else None)
    if checkpoint is not None:
        checkpoint.done()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return ShardOutcome(shard.index, part.totals["n_tokens"], wall, cpu_seconds=cpu, part=unit.part)


def load_unit(plan: CountPlan, unit: Unit) -> tuple[PartialCounts, Optional[Seam]]:
    """A unit's partial counts and seam."""
    path = plan.partial_path(unit)
    part, meta = PartialCounts.load(path)
    if meta.get("seam") is None:
        return part, None
    with np.load(path) as z:
        return part, Seam.load(z, meta["seam"])


def finished(plan: CountPlan, unit: Unit) -> Optional[int]:
    """Tokens of ``unit``'s partial file when it exists and matches the shard, range and plan, else None."""
    path = plan.partial_path(unit)
    if not path.exists():
        return None
    try:
        with np.load(path) as z:
            meta = json.loads(z["meta"].tobytes().decode())
    except Exception:  # a torn or foreign file: count the unit again
        return None
    if meta.get("fingerprint") != plan.fingerprint() or meta.get("shard") != unit.shard.identity():
        return None
    if meta.get("range") != [unit.start, unit.end, unit.part, unit.parts]:
        return None
    return int(meta["totals"]["n_tokens"])


# ------------------------------------------------------------------------------------------------ executors


class _Inline:
    """One worker, in this process."""

    def __init__(self, plan: CountPlan):
        self.plan, self.queue = plan, []  # type: ignore[var-annotated]

    capacity = 1

    def submit(self, unit: Unit) -> None:
        self.queue.append(unit)

    def next_done(self) -> ShardOutcome:
        return count_unit(self.plan, self.queue.pop(0))

    def close(self) -> None:
        self.queue.clear()


class _Processes:
    """``workers`` local processes."""

    def __init__(self, plan: CountPlan, workers: int):
        self.plan, self.capacity = plan, workers
        self.pool = ProcessPoolExecutor(max_workers=workers)
        self.running: set[Future] = set()

    def submit(self, unit: Unit) -> None:
        self.running.add(self.pool.submit(count_unit, self.plan, unit))

    def next_done(self) -> ShardOutcome:
        done, _ = wait(self.running, return_when=FIRST_COMPLETED)
        fut = next(iter(done))
        self.running.discard(fut)
        return fut.result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class _Ray:
    """One Ray task per unit on the cluster at ``address`` (None: ``RAY_ADDRESS`` or a new local one)."""

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
        self.remote = ray.remote(num_cpus=1, max_retries=0)(count_unit)
        self.plan_ref = ray.put(plan)
        self.running: list[Any] = []

    def submit(self, unit: Unit) -> None:
        self.running.append(self.remote.remote(self.plan_ref, unit))

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
    """What a progress callback sees after every finished unit."""

    done: int
    total: int
    tokens: int
    seconds: float
    reused: int = 0
    units_done: int = 0
    units_total: int = 0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else math.nan


@dataclass
class AuditRun:
    """The map's outcome: shards counted (in corpus order), reused, skipped (bad, with tokens), failed;
    the units of every shard."""

    shards: list[Shard]
    counted: list[ShardOutcome] = field(default_factory=list)
    skipped: list[ShardOutcome] = field(default_factory=list)
    failed: Optional[ShardOutcome] = None
    seconds: float = 0.0
    units: dict[int, list[Unit]] = field(default_factory=dict)
    units_reused: int = 0
    tokens_now: int = 0  # tokens counted by this run (not reused)

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


class _ShardTally:
    """Units of one shard still to finish, and what the finished ones counted."""

    def __init__(self, units: list[Unit]):
        self.left = len(units)
        self.tokens = 0
        self.seconds = 0.0
        self.cpu = 0.0
        self.reused = 0

    def add(self, out: ShardOutcome) -> bool:
        """Add a finished unit; True when it was the shard's last."""
        self.left -= 1
        self.tokens += out.tokens
        self.seconds += out.seconds
        self.cpu += out.cpu_seconds
        self.reused += int(out.reused)
        return self.left == 0


class _MapLoop:
    """The map's bookkeeping: units left to count (finished ones reused), each shard's tally, progress."""

    def __init__(
        self,
        run: AuditRun,
        plan: CountPlan,
        skip_bad: bool,
        max_tokens: Optional[int],
        progress: Optional[Callable[[Progress], None]],
    ):
        self.run, self.skip_bad, self.max_tokens, self.progress = run, skip_bad, max_tokens, progress
        self.t0 = time.perf_counter()
        self.tally = {i: _ShardTally(units) for i, units in run.units.items()}
        self.n_units = sum(len(u) for u in run.units.values())
        self.todo: list[Unit] = []
        self.units_done = 0
        for s in run.shards:
            for u in run.units[s.index]:
                n = finished(plan, u)
                if n is None:
                    self.todo.append(u)
                    continue
                self.units_done += 1
                if self.tally[s.index].add(ShardOutcome(s.index, n, reused=True, part=u.part)):
                    run.counted.append(ShardOutcome(s.index, self.tally[s.index].tokens, reused=True))
        run.units_reused = self.units_done
        self.n_reused = len(run.counted)
        self.reused_tokens = sum(t.tokens for t in self.tally.values())
        self.tokens = 0
        self.bad: set[int] = set()
        self.begun = {i for i, t in self.tally.items() if t.left < len(run.units[i])}
        self.limit()
        self.report()

    def report(self) -> None:
        if self.progress:
            run = self.run
            done, secs = len(run.counted) + len(run.skipped), time.perf_counter() - self.t0
            p = Progress(
                done, len(run.shards), self.tokens, secs, self.n_reused, self.units_done, self.n_units
            )
            self.progress(p)

    def limit(self) -> None:
        """Once ``max_tokens`` are counted, start no unit of a shard not begun."""
        if self.max_tokens is not None and self.reused_tokens + self.tokens >= self.max_tokens:
            self.todo = [u for u in self.todo if u.shard.index in self.begun]

    def next_unit(self) -> Optional[Unit]:
        while self.todo:
            unit = self.todo.pop(0)
            if unit.shard.index not in self.bad:
                self.begun.add(unit.shard.index)
                return unit
        return None

    def finished(self, out: ShardOutcome) -> bool:
        """Book a unit's outcome; True to stop (a bad shard without ``skip_bad``)."""
        run = self.run
        if out.index in self.bad:
            return False
        if out.error is not None:
            if not self.skip_bad:
                run.failed = run.failed or out
                return True
            self.bad.add(out.index)
            run.skipped.append(out)
            self.report()
            return False
        self.units_done += 1
        self.tokens += out.tokens
        t = self.tally[out.index]
        if t.add(out):
            whole = t.reused == len(run.units[out.index])
            run.counted.append(ShardOutcome(out.index, t.tokens, t.seconds, None, whole, t.cpu))
            self.report()
        elif len(run.units[out.index]) > 1:
            self.report()
        self.limit()
        return False

    def drive(self, pool: Any) -> None:
        inflight, stop = 0, False
        while True:
            while not stop and inflight < pool.capacity and (unit := self.next_unit()) is not None:
                pool.submit(unit)
                inflight += 1
            if not inflight:
                break
            out = pool.next_done()
            inflight -= 1
            stop = self.finished(out) or stop


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
    """Count every unit not already counted (resume), in order; stop starting units after a bad one (unless
    ``skip_bad_shards``: its shard is left out) or, once ``max_tokens`` are counted, units of shards not
    begun. Finished units' counts stay on disk."""
    if executor not in EXECUTORS:
        raise UsageError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if workers < 1:
        raise UsageError(f"--workers must be ≥ 1, got {workers}")
    run = AuditRun(list(shards), units={s.index: plan.units(s) for s in shards})
    loop = _MapLoop(run, plan, skip_bad_shards, max_tokens, progress)
    if loop.todo:
        if executor == "ray":
            pool: Any = _Ray(plan, ray_address, workers)
        else:
            pool = _Inline(plan) if workers == 1 else _Processes(plan, workers)
        try:
            loop.drive(pool)
        finally:
            pool.close()
    order = {s.index: i for i, s in enumerate(shards)}
    run.tokens_now = loop.tokens
    run.counted.sort(key=lambda o: order[o.index])
    run.skipped.sort(key=lambda o: order[o.index])
    run.seconds = time.perf_counter() - loop.t0
    return run


def shard_counts(
    plan: CountPlan, shard: Shard, units: Optional[list[Unit]] = None, into: Optional[PartialCounts] = None
) -> PartialCounts:
    """A shard's counts: its partial file, or its ranges' files added and joined at the seams."""
    configs = check_configs(plan.configs)
    acc = into if into is not None else PartialCounts(tuple(c.context for c in configs))
    units = units or plan.units(shard)
    if len(units) == 1:
        part, _ = load_unit(plan, units[0])
        if into is None:
            return part
        acc.add(part)
        return acc
    joiner = SeamJoiner(plan.pairs, configs, acc)
    for unit in units:
        joiner.add(*load_unit(plan, unit))
    joiner.finish()
    return acc


def merge_partials(
    plan: CountPlan, shards: Sequence[Shard], units: Optional[dict[int, list[Unit]]] = None
) -> PartialCounts:
    """The reduce: add the partial counts of ``shards`` in corpus order (ranges joined at their seams)."""
    configs = check_configs(plan.configs)
    acc = PartialCounts(tuple(c.context for c in configs))
    for shard in sorted(shards, key=lambda s: s.index):
        shard_counts(plan, shard, (units or {}).get(shard.index), into=acc)
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
    parts = [shard_counts(plan, s) for s in sorted(shards, key=lambda s: s.index)]
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
