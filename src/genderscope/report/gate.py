"""Release gate: pass/fail cells from finished runs, for CI (``genderscope check``, ``genderscope.check``).

Two kinds of rules, each checked per run and test (task):

* **state rules** (``fail_on``): the report's summary cell of the test (same metric, same state as the
  report's first screen, :func:`genderscope.report.summary.summary_table`) fails when its state is one of
  ``fail_on`` (default: ``biased``);
* **thresholds** (``--max METRIC=VALUE``, ``--min METRIC=VALUE``, optionally ``TASK:METRIC=VALUE``): every
  run and test that reports the metric fails when the point value is above the maximum (below the
  minimum); with ``strict`` the whole 95% CI must lie within the bound (``ci_high <= max``,
  ``ci_low >= min``), and a metric without an interval fails.  An undefined value fails a threshold.

A cell that breaks several rules is one cell with all its rules.

**Multiplicity**: every state cell whose metric has a no-bias value and an interval gets a two-sided
p-value of H0: metric = no-bias value, read from its interval
(:func:`~genderscope.stats.intervals.pvalue_from_interval`: below 0.05 exactly when the 95% CI excludes
the value).  These p-values are adjusted over all such cells of the check (``correction``: ``holm``, the
default, controls the family-wise error rate; ``bh`` the false discovery rate; ``none`` gates each cell at
95% on its own), and a ``biased`` or ``anti-stereotypical`` cell fails its state rule only when its
adjusted p-value is below :data:`ALPHA`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from genderscope.common.errors import UsageError
from genderscope.core.metrics import MetricEntry
from genderscope.core.results_file import TaskResults
from genderscope.report.runs import RunData, load_runs
from genderscope.core.evidence import STATES
from genderscope.report.summary import model_runs_first, summary_cell, summary_table
from genderscope.report.glossary import metric_doc
from genderscope.core.textfmt import fmt
from genderscope.stats.intervals import pvalue_from_interval
from genderscope.stats.tests import CORRECTIONS, adjust

#: ``--fail-on`` when none is given
DEFAULT_FAIL_ON = ("biased",)
#: ``--correction`` when none is given
DEFAULT_CORRECTION = "holm"
#: family-wise (holm), false-discovery (bh) or per-cell (none) error rate of the state rules
ALPHA = 0.05
#: the states that claim a difference from the no-bias value (their rule is a test)
TESTED_STATES = ("biased", "anti-stereotypical")


def parse_correction(value: str) -> str:
    """``holm``, ``bh`` or ``none`` (case-insensitive); a :class:`UsageError` naming them otherwise."""
    name = str(value).strip().lower()
    if name not in CORRECTIONS:
        raise UsageError(
            f"--correction: unknown correction {value!r}; use holm (family-wise error, the default), "
            "bh (false discovery rate) or none (each cell at 95% on its own)"
        )
    return name


def fmt_p(p: float | None) -> str:
    """A p-value in two significant digits ('<0.0001' below that)."""
    if p is None or math.isnan(p):
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.2g}"


def parse_states(values: Iterable[str]) -> tuple[str, ...]:
    """``biased,not-enough-evidence`` (comma lists, repeated, ``-`` or space) -> state names; ``none`` = no
    state rule.  Unknown names raise a :class:`UsageError` listing the states."""
    by_key = {_state_key(s): s for s in STATES}
    names: list[str] = []
    for value in values:
        for part in str(value).split(","):
            key = _state_key(part)
            if not key or key == "none":
                continue
            name = by_key.get(key)
            if name is None:
                known = ", ".join(s.replace(" ", "-") for s in STATES)
                raise UsageError(f"--fail-on: unknown state {part.strip()!r}; states: {known} (or none)")
            if name not in names:
                names.append(name)
    return tuple(names)


def _state_key(text: str) -> str:
    return text.strip().lower().replace("-", " ").replace("_", " ")


@dataclass(frozen=True)
class Threshold:
    """``metric`` must stay <= ``bound`` (``side='max'``) or >= ``bound`` (``side='min'``); ``task``
    restricts it to one test (None: every test that reports the metric)."""

    metric: str
    bound: float
    side: str = "max"
    task: str | None = None

    @classmethod
    def parse(cls, text: str, side: str) -> Threshold:
        """``METRIC=VALUE`` or ``TASK:METRIC=VALUE`` (one clear error naming the flag otherwise)."""
        name, sep, value = str(text).partition("=")
        task, colon, metric = name.strip().rpartition(":")
        metric = metric.strip()
        try:
            bound = float(value)
        except ValueError:
            bound = math.nan
        if not sep or not metric or math.isnan(bound):
            raise UsageError(
                f"--{side} {text!r}: expected METRIC=VALUE or TASK:METRIC=VALUE with a number, "
                "e.g. --max stereotype_rate=0.1"
            )
        return cls(metric, bound, side, task.strip() if colon else None)

    @property
    def flag(self) -> str:
        scope = f"{self.task}:" if self.task else ""
        return f"--{self.side} {scope}{self.metric}={fmt(self.bound)}"

    def applies(self, task: str) -> bool:
        return self.task is None or self.task == task

    def broken(self, m: MetricEntry, strict: bool) -> str | None:
        """The rule this entry breaks, in words, or None when it passes."""
        value = _finite(m.value)
        if value is None:
            return f"value undefined ({self.flag})"
        op = "<=" if self.side == "max" else ">="
        if strict:
            edge = _finite(m.ci_high if self.side == "max" else m.ci_low)
            if edge is None:
                return f"no 95% CI ({self.flag} --strict needs the whole interval within the bound)"
            bad = edge > self.bound if self.side == "max" else edge < self.bound
            which = "upper" if self.side == "max" else "lower"
            return (
                f"CI {which} bound {fmt(edge)} not {op} {fmt(self.bound)} ({self.flag} --strict)"
                if bad
                else None
            )
        bad = value > self.bound if self.side == "max" else value < self.bound
        return f"value {fmt(value)} not {op} {fmt(self.bound)} ({self.flag})" if bad else None


def thresholds(maximum: Any = None, minimum: Any = None) -> list[Threshold]:
    """Thresholds from ``{"metric": bound}`` mappings or ``["metric=bound", ...]`` lists (either side)."""
    out: list[Threshold] = []
    for side, given in (("max", maximum), ("min", minimum)):
        if not given:
            continue
        if isinstance(given, Mapping):
            out += [Threshold.parse(f"{k}={v}", side) for k, v in given.items()]
        else:
            out += [Threshold.parse(t, side) for t in ([given] if isinstance(given, str) else given)]
    return out


def _finite(x: Any) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    v = float(x)
    return v if math.isfinite(v) else None


#: the keys of a checked cell in JSON, in order (:meth:`CheckedCell.to_dict`)
CELL_KEYS = ("run", "model", "task", "metric", "value", "ci_low", "ci_high", "state", "reading", "failed",
             "rule", "run_dir", "p_value", "p_adjusted", "correction", "note", "chance",
             "chance_note")  # fmt: skip


@dataclass
class CheckedCell:
    """One (run, test, metric) checked: the numbers, the report's state and reading, the rules broken."""

    run: str  # the run's label in reports
    model: str
    task: str
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    state: str
    reading: str
    rules: list[str] = field(default_factory=list)
    run_dir: str = ""
    #: two-sided p-value of H0: metric = its no-bias value, and adjusted over the check's tested cells
    p_value: float | None = None
    p_adjusted: float | None = None
    correction: str = ""
    #: why a biased/anti-stereotypical state passes after the correction
    note: str = ""
    #: what a uniform random guesser gets (``chance 0.333``), and why the metric flags one too
    chance: str = ""
    chance_note: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.rules)

    @property
    def rule(self) -> str:
        return "; ".join(self.rules)

    def value_text(self) -> str:
        """'value [lo, hi]' (no brackets without an interval)."""
        ci = (
            f" [{fmt(self.ci_low)}, {fmt(self.ci_high)}]"
            if self.ci_low is not None and self.ci_high is not None
            else ""
        )
        return f"{fmt(self.value)}{ci}"

    def p_text(self) -> str:
        """'p = 0.012, holm-adjusted p = 0.17' ('' without a p-value)."""
        if self.p_value is None:
            return ""
        text = f"p = {fmt_p(self.p_value)}"
        if self.correction and self.correction != "none" and self.p_adjusted is not None:
            text += f", {self.correction}-adjusted p = {fmt_p(self.p_adjusted)}"
        return text

    def line(self) -> str:
        """``run · test · metric = value [CI] · state · p-values · rules`` (one line for the terminal and CI
        logs)."""
        value = self.value_text() + (f" ({self.chance})" if self.chance else "")
        head = f"{self.run} · {self.task} · {self.metric or '(no metric)'} = {value} · {self.state}"
        parts = [head] + [t for t in (self.p_text(), self.rule, self.note, self.chance_note) if t]
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The cell as JSON: :data:`CELL_KEYS` (the fields, ``rules`` as ``failed`` and ``rule``)."""
        return {key: getattr(self, key) for key in CELL_KEYS}


@dataclass
class CheckResult:
    """Every cell checked (state cells first, then threshold cells), in run order."""

    cells: list[CheckedCell]
    fail_on: tuple[str, ...] = DEFAULT_FAIL_ON
    rules: list[Threshold] = field(default_factory=list)
    strict: bool = False
    correction: str = DEFAULT_CORRECTION

    @property
    def tested(self) -> list[CheckedCell]:
        """The cells with a p-value (the family the correction adjusts over)."""
        return [c for c in self.cells if c.p_value is not None]

    @property
    def failures(self) -> list[CheckedCell]:
        return [c for c in self.cells if c.failed]

    @property
    def passed(self) -> bool:
        return not self.failures

    def describe_rules(self) -> str:
        parts = [f"fail on {', '.join(self.fail_on)}" if self.fail_on else "no state rule"]
        if any(s in TESTED_STATES for s in self.fail_on):
            n = len(self.tested)
            parts.append(
                f"{self.correction} over {n} tested cells at {ALPHA:g}"
                if self.correction != "none"
                else "each cell at 95% on its own (no correction)"
            )
        parts += [t.flag + (" (strict)" if self.strict else "") for t in self.rules]
        return "; ".join(parts)


def _entry_numbers(m: MetricEntry | None) -> tuple[float | None, float | None, float | None]:
    if m is None:
        return None, None, None
    return _finite(m.value), _finite(m.ci_low), _finite(m.ci_high)


def _cell(run: RunData, task: str, metric: str, state: str, reading: str) -> CheckedCell:
    value, lo, hi = _entry_numbers(run.tasks[task].metrics.get(metric))
    return CheckedCell(
        run.label, run.model, task, metric, value, lo, hi, state, reading, run_dir=str(run.path)
    )


def state_cells(runs: list[RunData]) -> list[CheckedCell]:
    """The report's summary cells, one per run and test, with the numbers of the metric each shows."""
    table = summary_table(runs)
    ordered = model_runs_first(runs)
    cells: list[CheckedCell] = []
    for r in ordered:
        i = table.rows.index(r.row_label)
        for task in r.tasks:
            shown = table.cells[i][table.tests.index(task)]
            assert shown is not None
            # a row's cell is that of its first run with the test; a later run of the row gets its own
            first = next(x for x in ordered if x.row_label == r.row_label and task in x.tasks)
            if first is not r:
                shown = summary_cell(task, r.tasks[task], shown.metric)
            cell = _cell(r, task, shown.metric, shown.state, shown.reading)
            cell.chance, cell.chance_note = shown.chance, shown.chance_note
            cells.append(cell)
    return cells


def _metric_state(task: str, res: TaskResults, metric: str) -> tuple[str, str]:
    """The report's state and reading of ``metric`` itself (not a fallback metric)."""
    cell = summary_cell(task, res, metric)
    if cell.metric == metric:
        return cell.state, cell.reading
    return "not enough evidence", f"{metric} is undefined."


def _check_known(runs: list[RunData], rules: list[Threshold]) -> None:
    """Every threshold names a metric (and test) some run reports; else a UsageError naming them."""
    for t in rules:
        if t.task is not None and not any(t.task in r.tasks for r in runs):
            tests = sorted({name for r in runs for name in r.tasks})
            raise UsageError(f"{t.flag}: no run has test {t.task!r}; the runs have: {', '.join(tests)}")
        if not any(t.metric in res.metrics for r in runs for name, res in r.tasks.items() if t.applies(name)):
            names = sorted(
                {
                    n
                    for r in runs
                    for name, res in r.tasks.items()
                    if t.applies(name)
                    for n in res.headline_names()
                }
            )
            raise UsageError(
                f"{t.flag}: unknown metric {t.metric!r} (no run reports it); headline metrics: "
                f"{', '.join(names) or 'none'} (`genderscope compare RUN --all` lists every metric)"
            )


def check_runs(
    runs: list[RunData],
    fail_on: Sequence[str] = DEFAULT_FAIL_ON,
    rules: Sequence[Threshold] = (),
    strict: bool = False,
    correction: str = DEFAULT_CORRECTION,
) -> CheckResult:
    """Check loaded runs (labels assigned, :func:`~genderscope.report.runs.load_runs`); ``correction``:
    holm, bh or none (see the module docstring)."""
    states = parse_states(fail_on)
    correction = parse_correction(correction)
    rules = list(rules)
    _check_known(runs, rules)
    cells = state_cells(runs)
    n_tested = assign_pvalues(cells, runs, correction)
    for c in cells:
        if c.state not in states:
            continue
        if c.state in TESTED_STATES and correction != "none" and not (c.p_adjusted or 0.0) < ALPHA:
            c.note = (
                f"passes: {c.state} at 95% on its own, not after {correction} over {n_tested} tested cells "
                f"(adjusted p >= {ALPHA:g})"
            )
            continue
        c.rules.append(f"state {c.state} (--fail-on {c.state.replace(' ', '-')})")
    by_key = {(c.run_dir, c.task, c.metric): c for c in cells}
    for r in model_runs_first(runs):
        for task, res in r.tasks.items():
            for t in rules:
                m = res.metrics.get(t.metric)
                if m is None or not t.applies(task):
                    continue
                key = (str(r.path), task, t.metric)
                if key not in by_key:
                    by_key[key] = _cell(r, task, t.metric, *_metric_state(task, res, t.metric))
                    cells.append(by_key[key])
                broken = t.broken(m, strict)
                if broken:
                    by_key[key].rules.append(broken)
    return CheckResult(cells, states, rules, strict, correction)


def _level(run: RunData, task: str) -> float:
    """The confidence level of a run's test (its parameters' ``confidence_level``, else 0.95)."""
    params = run.tasks[task].extra.get("parameters")
    level = params.get("confidence_level") if isinstance(params, Mapping) else None
    return float(level) if isinstance(level, (int, float)) and 0 < level < 1 else 0.95


def assign_pvalues(cells: list[CheckedCell], runs: list[RunData], correction: str) -> int:
    """Set each cell's p-value (metric with a no-bias value and an interval) and its adjusted p-value
    over all such cells; returns how many there are."""
    by_dir = {str(r.path): r for r in runs}
    tested: list[CheckedCell] = []
    for c in cells:
        doc = metric_doc(c.task, c.metric) if c.metric else None
        if doc is None or doc.neutral is None or not doc.sign or c.value is None:
            continue
        if c.ci_low is None or c.ci_high is None:
            continue
        run = by_dir.get(c.run_dir)
        level = _level(run, c.task) if run is not None else 0.95
        c.p_value = pvalue_from_interval(c.value, c.ci_low, c.ci_high, float(doc.neutral), level)
        tested.append(c)
    adjusted = adjust([c.p_value for c in tested], correction)
    for c, p in zip(tested, adjusted.tolist()):
        c.p_adjusted, c.correction = float(p), correction
    return len(tested)


def check_dirs(
    run_dirs: Sequence[str | Path],
    fail_on: Sequence[str] = DEFAULT_FAIL_ON,
    maximum: Any = None,
    minimum: Any = None,
    strict: bool = False,
    correction: str = DEFAULT_CORRECTION,
) -> CheckResult:
    """:func:`check_runs` over run folders (one-line errors for unreadable folders)."""
    return check_runs(load_runs(list(run_dirs)), fail_on, thresholds(maximum, minimum), strict, correction)


def junit_xml(result: CheckResult) -> str:
    """JUnit XML: one ``testsuite`` per run, one ``testcase`` per checked cell (``classname`` = run label
    and test, ``name`` = metric), a ``failure`` element with the broken rules."""
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name="genderscope check", tests=str(len(result.cells)))
    root.set("failures", str(len(result.failures)))
    suites: dict[str, ET.Element] = {}
    for c in result.cells:
        suite = suites.get(c.run_dir)
        if suite is None:
            suite = suites[c.run_dir] = ET.SubElement(root, "testsuite", name=c.run, tests="0", failures="0")
            ET.SubElement(ET.SubElement(suite, "properties"), "property", name="run_dir", value=c.run_dir)
        suite.set("tests", str(int(suite.get("tests", "0")) + 1))
        case = ET.SubElement(suite, "testcase", classname=f"{c.run}.{c.task}", name=c.metric or "(no metric)")
        if c.p_value is not None:
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="p_value", value=repr(c.p_value))
            ET.SubElement(props, "property", name="p_adjusted", value=repr(c.p_adjusted))
            ET.SubElement(props, "property", name="correction", value=c.correction)
        if c.failed:
            suite.set("failures", str(int(suite.get("failures", "0")) + 1))
            fail = ET.SubElement(case, "failure", message=c.rule, type=c.state.replace(" ", "-"))
            fail.text = c.line() + "\n" + c.reading
        else:
            ET.SubElement(case, "system-out").text = c.line() + "\n" + c.reading
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
