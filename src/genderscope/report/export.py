"""Export every table of a run to CSV or Parquet.

Tables: ``metrics`` (model, task, metric, value, ci_low, ci_high, no_ci), one table per list-of-dict
entry of each task's block in ``results.json`` (file ``<task>__<key>``, nested keys joined with ``.``) and
``attempts`` (every line of attempts.jsonl).  Nested values (lists, dicts) become JSON strings, so
every column has one scalar type and the files load in any spreadsheet or dataframe library.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from genderscope.common.errors import UsageError
from genderscope.report.runs import RunData, load_run

FORMATS = ("csv", "parquet")


def _flat(v: Any) -> Any:
    if isinstance(v, (list, dict)):
        return json.dumps(v, ensure_ascii=False)
    return v


def run_tables(run: RunData, attempts: bool = True) -> dict[str, list[dict[str, Any]]]:
    """Table name -> rows (flat dicts) for every table in the run."""
    tables: dict[str, list[dict[str, Any]]] = {}
    tables["metrics"] = [
        {
            "model": run.model,
            "task": task,
            "metric": name,
            "value": m.value,
            "ci_low": m.ci_low,
            "ci_high": m.ci_high,
            "no_ci": m.no_ci,
        }
        for task, res in run.tasks.items()
        for name, m in res.metrics.items()
    ]
    for task, res in run.tasks.items():
        for key, rows in res.tables().items():
            tables[f"{task}__{key}"] = [{k: _flat(v) for k, v in r.items()} for r in rows]
    if attempts and run.attempts_path.exists():
        tables["attempts"] = [{k: _flat(v) for k, v in r.items()} for r in run.iter_attempts()]
    return tables


def _frame(rows: list[dict[str, Any]]) -> Any:
    import pandas as pd

    df = pd.DataFrame.from_records(rows)
    for col in df.columns:  # mixed Python types in one column -> text (Parquet needs one type)
        if df[col].dtype == object:
            kinds = {
                type(v) for v in df[col] if v is not None and not (isinstance(v, float) and math.isnan(v))
            }
            if len(kinds) > 1 and not kinds <= {int, float}:
                df[col] = [None if v is None else str(v) for v in df[col]]
    return df


def export_run(
    run_dir: str | Path, fmt: str = "csv", out: str | Path | None = None, attempts: bool = True
) -> list[Path]:
    """Write every table of the run to ``out`` (default RUN_DIR/export); returns the files written."""
    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    run = load_run(run_dir)
    target = Path(out) if out else run.path / "export"
    target.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UsageError("Parquet export needs pyarrow: pip install 'genderscope[report]'") from None
    written = []
    for name, rows in run_tables(run, attempts).items():
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        path = target / f"{safe}.{fmt}"
        df = _frame(rows)
        if fmt == "csv":
            df.to_csv(path, index=False)
        else:
            df.to_parquet(path, index=False)
        written.append(path)
    return written
