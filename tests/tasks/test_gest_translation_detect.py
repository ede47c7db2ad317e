"""gest-translation's speaker-gender detection: vectors per language (spec: docs/gest-translation.md) and
the properties every rule keeps (both genders read alike; mixed clues are undetected, never guessed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("simplemma", reason="needs the [translation] extra (simplemma)")
pytest.importorskip("pymorphy3", reason="needs the [translation] extra (pymorphy3)")
pytest.importorskip("morfeusz2", reason="needs the [translation] extra (morfeusz2)")

from genderscope.common.errors import UsageError  # noqa: E402
from genderscope.tasks.gest_translation.detect import FEMALE, MALE, MIXED, NONE, clauses  # noqa: E402
from genderscope.tasks.gest_translation.languages import LANGUAGES, detect, parse_languages  # noqa: E402

M, F = MALE, FEMALE

#: (language, translation, expected status, deciding rule or None); sentences of the published MT files
VECTORS = [
    ("cs", "Vždycky jsem byl vůdčí typ.", M, "cs:l-participle"),
    ("cs", "V každém vztahu jsem byla vždycky ta submisivní.", F, "cs:l-participle"),
    ("cs", "Když byla budova v plamenech, celou noc jsem nosil kbelíky vody.", M, "cs:l-participle"),
    ("cs", "Jsem šťastná.", F, "cs:adjective"),
    ("cs", "Jsem si velmi jistý.", M, "cs:adjective"),
    ("cs", "Jsem přesvědčena, že to zvládnu.", F, "cs:adjective"),
    ("cs", "Rád vařím.", M, "cs:pair"),
    ("cs", "Maso jsem osmažila, protože to má můj partner rád.", F, "cs:unknown-participle"),
    ("cs", "Mám dobrý plán.", NONE, None),
    ("cs", "Jsem vědec.", NONE, None),
    ("cs", "Vždycky jsem chtěla rodinu, o kterou bych se postaral.", MIXED, None),
    ("sk", "Keď ma uhryzol lev, neváhal som a ošetril som si ranu.", M, "sk:l-participle"),
    ("sk", "Som šťastná.", F, "sk:adjective"),
    ("sk", "Videla som ho.", F, "sk:l-participle"),
    ("sl", "Šla sem v klub.", F, "sl:l-participle"),
    ("sl", "Sem srečen.", M, "sl:adjective"),
    ("sl", "Vesela sem, ko lahko poskrbim za vse v hiši.", F, "sl:adjective"),
    ("sl", "Moral bi pospraviti pisarno.", NONE, None),
    ("hr", "Ja sam sretna.", F, "hr:adjective"),
    ("hr", "Uvijek sam bio vođa.", M, "hr:l-participle"),
    ("hr", "Nisam mogao pogoditi marku šminke, ali osjećala sam se prekrasno noseći je.", MIXED, None),
    ("sr", "Нисам могао да отворим киселе краставце, па сам замолио цимера.", M, "sr:l-participle"),
    ("sr", "Uvek sam bila liderski tip.", F, "sr:l-participle"),
    ("sr", "Nikada nisam video to.", M, "sr:l-participle"),
    ("pl", "Zawsze byłam typem przywódcy.", F, "pl:past-first-person"),
    ("pl", "Sama wyniosłem go po schodach.", M, "pl:past-first-person"),
    ("pl", "Gdybym nie była miła, nie znalazłbym męża.", MIXED, None),
    ("pl", "Jestem szczęśliwa.", F, "pl:predicative"),
    ("pl", "Czuję się zmęczony.", M, "pl:predicative"),
    ("pl", "Będę pracował.", M, "pl:past-with-marker"),
    ("pl", "Sama to zrobię.", F, "pl:sam"),
    ("pl", "Mam dobry plan.", NONE, None),
    ("ru", "Я поняла, что самое главное — быть последовательным.", F, "ru:past"),
    ("ru", "Каждый раз, когда я ходил на дискотеку, у меня была одна ночь.", M, "ru:past"),
    ("ru", "Когда был ковид, я очень боялась карантина.", F, "ru:past"),
    ("ru", "Я рад.", M, "ru:predicative"),
    ("ru", "Я уверена в себе.", F, "ru:predicative"),
    ("ru", "Сделала всё сама.", NONE, None),
    ("uk", "Я завжди була лідером.", F, "uk:past"),
    ("uk", "Я щаслива.", F, "uk:predicative"),
    ("uk", "Я радий.", M, "uk:predicative"),
    ("uk", "Я маю гарний дім.", NONE, None),
]


@pytest.mark.parametrize(("language", "text", "status", "rule"), VECTORS)
def test_detection_vectors(language: str, text: str, status: str, rule: str | None) -> None:
    got = detect(text, language)
    assert got.status == status, (got, text)
    assert got.gender == (status if status in (MALE, FEMALE) else None)
    if rule is not None:
        assert got.rule == rule, got.clues


#: (language, masculine, feminine): minimal pairs that differ only in the speaker's gender
PAIRS = [
    ("cs", "Včera jsem byl doma.", "Včera jsem byla doma."),
    ("cs", "Jsem unavený.", "Jsem unavená."),
    ("cs", "Nerad čekám.", "Nerada čekám."),
    ("sk", "Včera som bol doma.", "Včera som bola doma."),
    ("sk", "Som unavený.", "Som unavená."),
    ("sl", "Včeraj sem bil doma.", "Včeraj sem bila doma."),
    ("sl", "Sem srečen.", "Sem srečna."),
    ("hr", "Jučer sam bio kod kuće.", "Jučer sam bila kod kuće."),
    ("hr", "Ja sam umoran.", "Ja sam umorna."),
    ("sr", "Јуче сам био код куће.", "Јуче сам била код куће."),
    ("pl", "Wczoraj byłem w domu.", "Wczoraj byłam w domu."),
    ("pl", "Jestem zmęczony.", "Jestem zmęczona."),
    ("ru", "Вчера я был дома.", "Вчера я была дома."),
    ("ru", "Я уверен.", "Я уверена."),
    ("uk", "Вчора я був удома.", "Вчора я була вдома."),
    ("uk", "Я втомлений.", "Я втомлена."),
]

#: clauses that say nothing about the speaker's gender (no first-person marker, or no gendered word)
NEUTRAL = {
    "cs": ["Venku pršelo", "Je to tak", "Když přišla zima"],
    "sk": ["Vonku pršalo", "Je to tak"],
    "sl": ["Zunaj je deževalo", "Tako je"],
    "hr": ["Vani je padala kiša", "Tako je"],
    "sr": ["Napolju je padala kiša", "Тако је"],
    "pl": ["Na dworze padało", "Tak jest", "Kiedy przyszła zima"],
    "ru": ["На улице шёл дождь", "Так и есть", "Когда пришла зима"],
    "uk": ["Надворі йшов дощ", "Так і є"],
}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PAIRS), st.data())
def test_both_genders_are_read_alike(pair: tuple[str, str, str], data: st.DataObject) -> None:
    """The masculine form is detected masculine, the feminine feminine, whatever neutral clauses stand
    around them: no rule reads one gender only."""
    language, masc, fem = pair
    before = data.draw(st.lists(st.sampled_from(NEUTRAL[language]), max_size=2))
    after = data.draw(st.lists(st.sampled_from(NEUTRAL[language]), max_size=2))

    def around(s: str) -> str:
        return ", ".join([*before, s.rstrip("."), *after]) + "."

    assert detect(around(masc), language).gender == MALE
    assert detect(around(fem), language).gender == FEMALE


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PAIRS), st.booleans())
def test_clues_of_both_genders_are_undetected(pair: tuple[str, str, str], masc_first: bool) -> None:
    language, masc, fem = pair
    text = f"{masc} {fem}" if masc_first else f"{fem} {masc}"
    got = detect(text, language)
    assert (got.status, got.gender) == (MIXED, None)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(LANGUAGES)), st.text(max_size=80))
def test_detection_is_total_and_pure(language: str, text: str) -> None:
    """Any text gives a detection (never an exception), the same on a second call."""
    first = detect(text, language)
    assert first == detect(text, language)
    assert (first.gender is None) == (first.status not in (MALE, FEMALE))


def test_clauses_cut_at_punctuation_and_keep_apostrophes() -> None:
    assert clauses("Я купив м'ясо, а вона — хліб!") == [["я", "купив", "м'ясо"], ["а", "вона"], ["хліб"]]
    assert clauses("") == [] and clauses("123 ...") == []


def test_empty_answers_are_undetected() -> None:
    assert detect(None, "cs").status == "empty" and detect("  ", "pl").gender is None


def test_language_list_is_checked() -> None:
    assert parse_languages("cs, PL,cs") == ["cs", "pl"]
    assert parse_languages("all") == list(LANGUAGES)
    with pytest.raises(UsageError, match=r"unsupported language 'be'.*supported: cs \(Czech\)"):
        parse_languages("cs,be")
