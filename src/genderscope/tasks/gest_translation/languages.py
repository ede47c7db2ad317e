"""The target languages gest-translation reads: name, detection rules and morphology, per ISO 639-1 code."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from genderscope.common.errors import UsageError
from genderscope.tasks.gest_translation import morph, rules_aux, rules_east, rules_pl
from genderscope.tasks.gest_translation.detect import ClauseRules, Detection, detect_with


@dataclass(frozen=True)
class Language:
    code: str
    name: str  # in English, as the translation prompt names it
    rules: ClauseRules
    morphology: str  # the package the rules read, for the docs and messages


LANGUAGES: dict[str, Language] = {
    "cs": Language("cs", "Czech", partial(rules_aux.clause_clues, rules_aux.LANGUAGES["cs"]), "simplemma"),
    "pl": Language("pl", "Polish", rules_pl.clause_clues, "morfeusz2"),
    "ru": Language("ru", "Russian", partial(rules_east.clause_clues, "ru"), "pymorphy3 + pymorphy3-dicts-ru"),
    "uk": Language(
        "uk", "Ukrainian", partial(rules_east.clause_clues, "uk"), "pymorphy3 + pymorphy3-dicts-uk"
    ),
    "sk": Language("sk", "Slovak", partial(rules_aux.clause_clues, rules_aux.LANGUAGES["sk"]), "simplemma"),
    "sl": Language("sl", "Slovene", partial(rules_aux.clause_clues, rules_aux.LANGUAGES["sl"]), "simplemma"),
    "hr": Language("hr", "Croatian", partial(rules_aux.clause_clues, rules_aux.LANGUAGES["hr"]), "simplemma"),
    "sr": Language("sr", "Serbian", partial(rules_aux.clause_clues, rules_aux.LANGUAGES["sr"]), "simplemma"),
}
#: the default target languages: the six into which all four published MT systems translated
DEFAULT = ("cs", "pl", "ru", "uk", "sk", "sl")


def parse_languages(value: str) -> list[str]:
    """Codes of a ``--languages`` value (``cs,pl``; ``all`` = every supported one), checked, in order,
    without repeats; a code that is not supported is one line naming the supported ones."""
    codes = list(LANGUAGES) if value.strip() == "all" else [c.strip().lower() for c in value.split(",")]
    codes = [c for c in codes if c]
    bad = [c for c in codes if c not in LANGUAGES]
    if bad or not codes:
        what = f"unsupported language {bad[0]!r}" if bad else "no language given"
        raise UsageError(
            f"gest-translation: {what} in --languages {value!r}; supported: "
            + ", ".join(f"{c} ({lang.name})" for c, lang in LANGUAGES.items())
        )
    return list(dict.fromkeys(codes))


def require(codes: list[str]) -> None:
    """One line naming the extra to install unless every language's morphology is installed."""
    for code in codes:
        morph.require(code)


def detect(text: str | None, language: str) -> Detection:
    """The grammatical gender ``text`` (a translation into ``language``) gives its first-person speaker."""
    return detect_with(LANGUAGES[language].rules, text)
