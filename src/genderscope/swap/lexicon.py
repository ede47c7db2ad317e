"""The word lists of the swap engine, read as data.

- Pronouns: the rows of HELM's ``GENDER_PRONOUN_MAPPINGS`` (neutral, female, male; after Lauscher et al.
  2022), read from the mirror file ``helm/gender_perturbation.py`` (Apache-2.0) with :mod:`ast`; the file is
  never imported. The rows are, in order, subject, object, possessive determiner, possessive pronoun and
  reflexive: "her" is in rows 2 and 3, "his" in rows 3 and 4, and the engine resolves them by context.
- Gendered terms: HELM's ``GENDER_TERM_MAPPINGS`` (neutral, female, male; after Garg et al. 2018 and
  Bolukbasi et al. 2016, plus HELM's additions), then the Bordia & Bowman (2019) pair files ``penn``,
  ``wiki``, ``dm`` (male, female; the authors' ``wife husband`` row read as husband → wife; no licence
  stated). A word keeps the first counterpart it is given (HELM's before Bordia's); pronoun rows of the pair
  files are left to the pronoun rules. HELM's row ``("grandparents", "grandmothers", "grandfather")`` is
  read with "grandfathers" (:data:`HELM_FIXES`).
- First names: ``first_names.tsv`` beside this module, rank-paired male and female names from the 1990 US
  Census frequency lists (public domain; built by ``devtools/make_swap_names.py``, which says how).
"""

from __future__ import annotations

import ast
import csv
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from genderscope.bordia.pairs import parse_gender_pairs
from genderscope.common.errors import DataError

HELM_FILE = "helm/gender_perturbation.py"
BORDIA_FILES = (
    "bordia_bowman/penn-gender-pairs",
    "bordia_bowman/wiki-gender-pairs",
    "bordia_bowman/dm-gender-pairs",
)
NAMES_FILE = "first_names.tsv"
#: corrections of HELM's term rows (neutral, female, male), each documented in docs/decisions.md
HELM_FIXES: dict[tuple[str, str, str], tuple[str, str, str]] = {
    ("grandparents", "grandmothers", "grandfather"): ("grandparents", "grandmothers", "grandfathers"),
}
#: pronoun roles, the order of HELM's pronoun rows
ROLES = ("subject", "object", "determiner", "possessive", "reflexive")
PRONOUN_SHAPE = (
    ("they", "she", "he"),
    ("them", "her", "him"),
    ("their", "her", "his"),
    ("theirs", "hers", "his"),
    ("themselves", "herself", "himself"),
)


@dataclass(frozen=True)
class Term:
    """A gendered word (lower case): its gender (``"m"``/``"f"``) and its counterparts."""

    word: str
    gender: str
    other: str
    neutral: str | None
    source: str


@dataclass(frozen=True, eq=False)
class Lexicon:
    """Pronoun rows, gendered terms and rank-paired first names, with where each came from.

    Compared and hashed by identity (the engine caches its compiled regex per lexicon).
    """

    pronouns: tuple[tuple[str, str, str], ...]
    terms: dict[str, Term]
    names: dict[str, tuple[str, str, int]] = field(
        default_factory=dict
    )  # name -> (gender, counterpart, rank)
    sources: tuple[str, ...] = ()

    def describe(self) -> dict[str, object]:
        """Counts and sources, for results.json."""
        return {
            "pronoun_rows": len(self.pronouns),
            "terms": len(self.terms),
            "names": len(self.names),
            "sources": list(self.sources),
        }


def _literal(tree: ast.Module, name: str, path: str) -> object:
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value is not None:
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                break
    raise DataError(f"{path}: no literal list {name} in the file; check the pinned HELM file")


def parse_helm(
    source: str, path: str = HELM_FILE
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """HELM's (term rows, pronoun rows) from the text of ``gender_perturbation.py``, without importing it."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise DataError(f"{path}:{e.lineno}: not Python ({e.msg}); check the pinned HELM file") from None
    rows = []
    for name in ("GENDER_TERM_MAPPINGS", "GENDER_PRONOUN_MAPPINGS"):
        value = _literal(tree, name, path)
        if not isinstance(value, list) or not all(
            isinstance(r, tuple) and len(r) == 3 and all(isinstance(w, str) for w in r) for r in value
        ):
            raise DataError(f"{path}: {name} is not a list of (neutral, female, male) rows")
        rows.append([HELM_FIXES.get(r, r) for r in value])
    if tuple(rows[1]) != PRONOUN_SHAPE:
        raise DataError(f"{path}: GENDER_PRONOUN_MAPPINGS differs from the rows the pronoun rules expect")
    return rows[0], rows[1]


def _add(terms: dict[str, Term], male: str, female: str, neutral: str | None, source: str) -> None:
    male, female = male.lower().rstrip("."), female.lower().rstrip(".")
    if male == female:
        return
    for word, gender, other in ((male, "m", female), (female, "f", male)):
        if word not in terms:
            terms[word] = Term(word, gender, other, neutral, source)


def build_lexicon(helm_source: str, bordia_texts: dict[str, str], names_text: str | None) -> Lexicon:
    """A :class:`Lexicon` from the texts of HELM's module, the Bordia & Bowman pair files, the names table."""
    term_rows, pronoun_rows = parse_helm(helm_source)
    pronoun_words = {w for row in pronoun_rows for w in row[1:]}
    terms: dict[str, Term] = {}
    for neutral, female, male in term_rows:
        _add(terms, male, female, neutral, "helm")
    for name, text in bordia_texts.items():
        for male, female in parse_gender_pairs(text, name, fix_wife_husband=True).pairs:
            if male.lower() not in pronoun_words:
                _add(terms, male, female, None, name)
    names = parse_names(names_text) if names_text is not None else {}
    sources = (HELM_FILE, *bordia_texts) + ((f"genderscope/swap/{NAMES_FILE}",) if names else ())
    return Lexicon(tuple(pronoun_rows), terms, names, sources)


def parse_names(text: str, path: str = NAMES_FILE) -> dict[str, tuple[str, str, int]]:
    """Name -> (gender, rank-paired counterpart, rank) from the names table (rank, male, %, female, %)."""
    out: dict[str, tuple[str, str, int]] = {}
    for i, row in enumerate(csv.DictReader(text.splitlines(), delimiter="\t"), start=2):
        try:
            rank, male, female = int(row["rank"]), row["male"], row["female"]
        except (KeyError, TypeError, ValueError):
            raise DataError(
                f"{path}:{i}: expected rank, male, male_percent, female, female_percent"
            ) from None
        out.setdefault(male, ("m", female, rank))
        out.setdefault(female, ("f", male, rank))
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: cannot read ({e}); run `genderscope data verify`") from None


@lru_cache(maxsize=1)
def default_lexicon() -> Lexicon:
    """HELM's lists and the Bordia & Bowman pairs from the data registry, and the shipped names table."""
    from genderscope.data.registry import DataRegistry

    reg = DataRegistry()
    helm = _read(reg.path(HELM_FILE))
    bordia = {name: _read(reg.path(name)) for name in BORDIA_FILES}
    names = resources.files("genderscope.swap").joinpath(NAMES_FILE).read_text(encoding="utf-8")
    return build_lexicon(helm, bordia, names)


def name_pairs(lexicon: Lexicon) -> list[tuple[str, str]]:
    """(male, female) first names by rank, most frequent first."""
    pairs = sorted((rank, name, other) for name, (g, other, rank) in lexicon.names.items() if g == "m")
    return [(m, f) for _, m, f in pairs]
