"""Plan :class:`GivenScores`: published per-item scores instead of a model, from score files.

A score file holds one float per line, line i = the i-th row of the benchmark's dataset (``nan`` allowed:
the row has no score; blank lines only at the end), as reference repositories publish their predictions
(:func:`read_scores`).  Each item is asked as one ``given`` request that the runner answers itself (attempt
id = the item id, the value and the item's first candidate text in the request), so the response store,
attempts.jsonl and ``reparse`` work as for a model; its one candidate score is the value (NaN: none).  A
run with score files asks no model: :func:`refuse_model` says so when one is given.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, ClassVar, Sequence

from genderscope.common.errors import DataError, UsageError
from genderscope.core.requests import AttemptResult, given_request
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.tasks.scored.items import ScoredItem
from genderscope.tasks.scored.plans import UNREADABLE, Plan, Readout, by_item, item_attempt

GIVEN = "given"
_ID_IN_NAME = re.compile(r"template[-_](\d+)")


def read_scores(path: str | Path, n_rows: int, dataset: str = "dataset") -> list[float]:
    """The scores of file ``path`` (``nan`` allowed, blank lines only at the end); DataErrors name
    ``file:line``; the number of scores must equal the ``n_rows`` of ``dataset`` (its name in messages)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"{p}: score file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{p}: cannot read score file ({exc})") from None
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    out: list[float] = []
    for i, raw in enumerate(lines, start=1):
        try:
            v = float(raw.strip())
        except ValueError:
            raise DataError(f"{p}:{i}: cannot read {raw!r} as a number (one score per line)") from None
        if math.isinf(v):
            raise DataError(f"{p}:{i}: score {raw.strip()!r} is infinite")
        out.append(v)
    if len(out) != n_rows:
        raise DataError(
            f"{p}: {len(out)} scores, but the {dataset} has {n_rows} rows "
            "(one score per dataset row, in row order)"
        )
    return out


def file_ids(paths: list[str], given: list[int] | None, option: str = "--template") -> list[int]:
    """The id of each score file (e.g. the template it scores): ``given`` ids, else ``template-K`` in the
    file name, else 0, 1, ...; one id per file, all distinct."""
    if given:
        if len(given) != len(paths):
            raise UsageError(
                f"{option} names {len(given)} template id(s) but --scores has {len(paths)} "
                "file(s); give one id per file, in the same order"
            )
        ids = list(given)
    else:
        found = [_ID_IN_NAME.search(Path(p).name) for p in paths]
        ids = [int(m.group(1)) for m in found if m] if all(found) else list(range(len(paths)))
    if len(set(ids)) != len(ids):
        raise UsageError(f"two score files have the same template id ({ids}); use {option} to set them")
    return ids


def refuse_model(task: Any) -> None:
    """UsageError when a run that aggregates given scores names a model (``random``, the default, is none)."""
    if task.ctx.model_kind not in ("", "random"):
        raise UsageError(
            f"{task.name} --scores aggregates given per-sentence scores and calls no "
            f"model; leave out --model (got a {task.ctx.model_kind!r} model)"
        )


class GivenScores(Plan):
    """See the module docstring; the benchmark defines ``given_value(item) -> float`` (NaN: no score)."""

    def __init__(self) -> None:
        super().__init__(None)

    def rounds(self, task: Any) -> Rounds:
        def ask(_answers: Answers) -> list:
            out = []
            for it in task.items():
                v = task.given_value(it)
                req = given_request(None if math.isnan(v) else v, it.candidates.texts()[0])
                out.append(item_attempt(it, "", req))
            return out

        return Rounds(Round(GIVEN, ask))

    def read(self, task: Any, results: Sequence[AttemptResult]) -> Readout:
        items, got = task.items(), by_item(results)
        out = Readout.blank(len(items), 1)
        for i, it in enumerate(items):
            rs = got.get(it.item_id, [])
            if not rs or not rs[0].ok:
                out.fail(i)
                continue
            try:
                out.ll[i, 0] = float("nan") if rs[0].response is None else float(rs[0].response)
            except UNREADABLE:
                out.fail(i, bad=True)
        return out

    def fields(self, rounds: Rounds, ar: AttemptResult) -> dict[str, Any]:
        return {}


class GivenScoring:
    """Mixin: ``--scores FILE[,FILE...]`` (see the module docstring).  The benchmark defines
    ``given_key(item) -> (file index, row)`` and ``given_rows() -> int`` (rows of its dataset);
    ``given_dataset``: the dataset's name in messages."""

    given_dataset: ClassVar[str] = "dataset"
    given_plan: ClassVar[Plan] = GivenScores()

    def files(self) -> list[str]:
        """The score files of option ``scores``."""
        scores = self.options.scores  # type: ignore[attr-defined]
        if getattr(self, "_files", (None,))[0] != scores:
            self._files = (scores, [p.strip() for p in scores.split(",") if p.strip()])
        return self._files[1]

    def plan(self) -> Plan:
        return self.given_plan if self.files() else super().plan()  # type: ignore[misc]

    def resolve_options(self, options: Any) -> Any:
        return options if self.files() else super().resolve_options(options)  # type: ignore[misc]

    def check_model(self) -> None:
        refuse_model(self) if self.files() else super().check_model()  # type: ignore[misc]

    def given_value(self, item: ScoredItem) -> float:
        """The item's score in its file (NaN: none); every file read once."""
        if not hasattr(self, "_given"):
            n = self.given_rows()  # type: ignore[attr-defined]
            self._given = [read_scores(p, n, self.given_dataset) for p in self.files()]
        f, row = self.given_key(item)  # type: ignore[attr-defined]
        return self._given[f][row]
