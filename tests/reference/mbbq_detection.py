"""Run MBBQ's own answer detection (Veranep/MBBQ ``mbbq.py``: ``detect_answer``, ``auto_detect``,
``check_all``; ``answer_detection.py``: its phrase lists) on a corpus of model-like replies and save what it
detects as a fixture (tests/fixtures/reference/mbbq_detect_answer.json), which ``tests/tasks/test_mbbq.py``
compares genderscope's :func:`genderscope.tasks.mbbq.detect.detect` with, offline.

``mbbq.py`` imports transformers, datasets and huggingface_hub at its top, so it is not imported: the three
functions are taken from its syntax tree and run with ``string`` and ``answer_detection``'s names, unchanged.
The upstream repository is not fetched here: pass a folder holding its two files (``--upstream DIR``).

The replies (:func:`replies`, seeded): for the first rows of every MBBQ and control file, each letter form
alone and inside before-/after-answer phrases of the row's language, option texts (exact, lower-cased, in a
sentence, two at once), unknown phrases, all three letters listed, letters at the start or end of a longer
text, punctuation and empty replies.

    PYTHONPATH=src python tests/reference/mbbq_detection.py --upstream DIR
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import random
import string
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "reference" / "mbbq_detect_answer.json"
COMMIT = "adaa40172cdcf52eb403c01954a1aef8b0b1e97d"
ROWS_PER_FILE = 2


def upstream_detector(upstream: Path) -> Any:
    """MBBQ's ``detect_answer(ans_options, ans, unknown_loc, language)``, from the files in ``upstream``."""
    spec = importlib.util.spec_from_file_location("answer_detection", upstream / "answer_detection.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    tree = ast.parse((upstream / "mbbq.py").read_text(encoding="utf-8"))
    wanted = {"auto_detect", "check_all", "detect_answer"}
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    namespace: dict[str, Any] = {"string": string, **vars(module)}
    exec(compile(ast.Module(body=funcs, type_ignores=[]), "mbbq.py", "exec"), namespace)  # noqa: S102
    return namespace["detect_answer"]


def _rows() -> list[Any]:
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.mbbq.data import SETS, load_rows
    from genderscope.tasks.mbbq.detect import LANGUAGES

    reg = DataRegistry()
    return [r for lang in LANGUAGES for which in SETS for r in load_rows(reg, lang, which, ROWS_PER_FILE)]


def replies(row: Any, rng: random.Random) -> list[str | None]:
    """Model-like replies to one row (see the module docstring)."""
    from genderscope.tasks.mbbq.detect import phrases, tables

    letters = tables()["letters"]
    before, after = phrases("before_answer", row.lang), phrases("after_answer", row.lang)
    unknown = phrases("unknown_answer", row.lang)
    opts = list(row.options)
    out: list[str | None] = [None, "", "...", "?!", " \n "]
    for form in range(len(letters[0])):
        k = rng.randrange(3)
        out += [letters[k][form], f"{letters[k][form]} {opts[k]}", f"{opts[k]} {letters[k][form]}"]
    for _ in range(12):
        k, form = rng.randrange(3), rng.randrange(len(letters[0]))
        out.append(f"{rng.choice(before)} {letters[k][form]} {opts[k]}.")
        out.append(f"{rng.choice(before)}\n{opts[k].lower()} because of the context.")
        out.append(f"I think {letters[k][form]} {rng.choice(after)}.")
        out.append(f"Well, {opts[k]} {rng.choice(after)}")
        out.append(f"{rng.choice(unknown)}. Maybe {opts[rng.randrange(3)]}?")
    out += [opts[0], opts[1], opts[2], opts[0] + ".", opts[1].lower(), f"{opts[0]} or {opts[1]}"]
    out += [f"It is {opts[2]}, clearly.", f"- {opts[1]}", "(A), (B) and (C) are all possible.",
            "A: yes B: no C: maybe", "The answer: B", "b", "C.", "Option (B) fits", "I would say A.",
            "x" * 3 + " A", "nothing to say"]  # fmt: skip
    return out


def build(upstream: Path, seed: int = 2026) -> dict[str, Any]:
    """The fixture: per case the row's language, options, unknown option, the reply and MBBQ's detection
    (0, 1, 2, or None where it returns nothing, NaN or "all")."""
    detect_answer = upstream_detector(upstream)
    rng = random.Random(seed)
    cases = []
    for row in _rows():
        for reply in replies(row, rng):
            got = detect_answer(
                list(row.options), float("nan") if reply is None else reply, row.unknown, row.lang
            )
            code = None if got is None or got == "all" or (isinstance(got, float)) else int(got)
            cases.append({"lang": row.lang, "options": list(row.options), "unknown": row.unknown,
                          "reply": reply, "detected": code})  # fmt: skip
    return {
        "source": f"Veranep/MBBQ {COMMIT}: mbbq.py detect_answer/auto_detect/check_all, answer_detection.py",
        "notice": "replies made by tests/reference/mbbq_detection.py (seed 2026) from MBBQ's rows",
        "cases": cases,
    }


def _main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--upstream", type=Path, required=True, help="folder with MBBQ's mbbq.py, answer_detection.py"
    )
    ap.add_argument("--out", type=Path, default=FIXTURE)
    args = ap.parse_args()
    got = build(args.upstream)
    head = {k: v for k, v in got.items() if k != "cases"}
    lines = ",\n".join(json.dumps(c, ensure_ascii=False) for c in got["cases"])
    text = json.dumps(head, ensure_ascii=False)[:-1] + ', "cases": [\n' + lines + "\n]}\n"
    args.out.write_text(text, encoding="utf-8")
    n, det = len(got["cases"]), sum(c["detected"] is not None for c in got["cases"])
    print(f"{args.out}: {n} replies, {det} detected", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
