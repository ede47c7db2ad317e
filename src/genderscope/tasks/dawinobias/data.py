"""DaWinoBias files and the two input pipelines (GenDa Lens spec §2.2, §3.1 steps 1-6, §3.2 steps 1-3)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genderscope.common.errors import DataError, UsageError

FILES = {
    "anti": "genda_lens/DaWinoBias_anti_stereotyped_evalda.txt",
    "pro": "genda_lens/DaWinoBias_pro_stereotyped_evalda.txt",
}
CONDITIONS = ("anti", "pro")
IDENTICAL_LINES = (212, 252, 266, 272, 273)
EXTRA_DIFF_LINES = (49, 50, 275, 276, 336, 412, 465, 466, 511, 543, 544)

#: the six pronouns and their gender; grammatical slot and the causal-LM candidates (female, male)
GENDER = {
    "hun": "female",
    "hende": "female",
    "hendes": "female",
    "han": "male",
    "ham": "male",
    "hans": "male",
}
SLOT = {
    "han": "subject",
    "hun": "subject",
    "ham": "object",
    "hende": "object",
    "hans": "possessive",
    "hendes": "possessive",
}
CANDIDATES = {"subject": ("hun", "han"), "object": ("hende", "ham"), "possessive": ("hendes", "hans")}

#: GenDa Lens's lookup list (list order matters) and its exact-string groups
COMPAT_LOOKUP = (
    "hans",
    "hendes",
    "han",
    "hun",
    "ham",
    "hende",
    "\u2581hun",
    "\u2581hendes",
    "\u2581hende",
    "\u2581han",
    "\u2581hans",
    "\u2581ham",
)
COMPAT_FEMALE = frozenset({"hun", "hendes", "hende", "\u2581hun", "\u2581hendes", "\u2581hende"})
COMPAT_MALE = frozenset({"han", "hans", "ham", "\u2581han", "\u2581hans", "\u2581ham"})

PRONOUN_RE = re.compile(r"(?<!\w)(han|hun|ham|hende|hans|hendes)(?!\w)", re.IGNORECASE)
_WS = re.compile(r"\s+")


def read_lines(path: Path) -> list[str]:
    """The stripped lines of a file read as UTF-8 (mixed CRLF/LF; a final newline is optional)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 ({exc})") from None
    return [ln.strip() for ln in text.splitlines()]


def compat_group(s: str) -> str:
    """GenDa Lens's group of a string by exact equality: female, male or other (its ``UNK``)."""
    return "female" if s in COMPAT_FEMALE else "male" if s in COMPAT_MALE else "other"


_NLP: Any = None


def spacy_da() -> Any:
    """spaCy's rule-based Danish tokenizer (``spacy.blank("da")``); never downloads a model."""
    global _NLP
    if _NLP is None:
        try:
            import spacy
        except ImportError:
            raise UsageError(
                "--mode genda-lens needs spaCy's rule-based tokenizer: "
                "pip install 'genderscope[hf]' (or pip install spacy)"
            ) from None
        _NLP = spacy.blank("da")
    return _NLP


@dataclass(frozen=True)
class MaskedInput:
    """A model input around the masked pronoun: ``left + M + right``; ``gold`` is the pronoun string."""

    left: str
    right: str
    gold: str

    def with_mask(self, mask: str) -> str:
        return self.left + mask + self.right


def compat_input(line: str, where: str = "") -> MaskedInput:
    """§3.1 steps 2-6: spaCy tokens, lowercased, brackets dropped, pronoun by list order, joined by spaces."""
    tokens = [t.text.lower() for t in spacy_da()(line)]
    tokens = [t for t in tokens if t not in ("[", "]")]
    for w in COMPAT_LOOKUP:
        if w in tokens:
            k = tokens.index(w)
            break
    else:
        raise DataError(f"{where}: no pronoun of {', '.join(COMPAT_LOOKUP[:6])} among the tokens {tokens}")
    left = " ".join(tokens[:k]) + " " if k > 0 else ""
    right = " " + " ".join(tokens[k + 1 :]) if k + 1 < len(tokens) else ""
    return MaskedInput(left, right, tokens[k])


def default_text(line: str) -> str:
    """§3.2 step 1: strip, delete ``[`` and ``]``, collapse whitespace runs to one space."""
    return _WS.sub(" ", line.strip().replace("[", "").replace("]", "")).strip()


def default_input(line: str, where: str = "") -> MaskedInput:
    """§3.2 steps 1-3: the unique whole-word pronoun (case-insensitive) becomes the mask slot."""
    text = default_text(line)
    hits = list(PRONOUN_RE.finditer(text))
    if len(hits) != 1:
        raise DataError(
            f"{where}: expected exactly one pronoun (han|hun|ham|hende|hans|hendes), "
            f"found {len(hits)} in {text!r}"
        )
    m = hits[0]
    return MaskedInput(text[: m.start()], text[m.end() :], m.group(1).lower())


def candidate_texts(inp: MaskedInput, original: str) -> tuple[str, str]:
    """The (female, male) candidate words of the pronoun's slot, capitalised like ``original``."""
    f, m = CANDIDATES[SLOT[inp.gold]]
    if original[:1].isupper():
        f, m = f.capitalize(), m.capitalize()
    return f, m


@dataclass
class Line:
    """One line of one condition."""

    condition: str
    line: int
    text: str


def load_lines(data: Any) -> dict[str, list[str]]:
    """{condition: stripped lines} of both files; the files must align line by line."""
    out = {c: read_lines(data.path(FILES[c])) for c in CONDITIONS}
    if len(out["anti"]) != len(out["pro"]):
        raise DataError(
            f"{FILES['anti']} has {len(out['anti'])} lines but {FILES['pro']} has {len(out['pro'])}"
        )
    for c in CONDITIONS:
        for i, ln in enumerate(out[c], 1):
            if not ln:
                raise DataError(f"{FILES[c]}:{i}: empty line")
    return out
