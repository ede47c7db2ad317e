"""Offline scorers of generated text (genderscope.scorers): the contract (metrics are functions of summed
per-text statistics, so streaming and resampling are exact), hand-checked spec vectors per scorer,
property tests of the tokenisers and counters, lookup and plugins, the missing-extra line.

Scorers that need the [generation] extra (vaderSentiment, hatesonar + onnxruntime, nltk) skip, naming
it, where it is not installed; hurtlex, refusal and length run on the core install."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from genderscope.common.errors import UsageError
from genderscope.core import lookup
from genderscope.scorers.base import MissingExtra, Scorer, make_scorer, scorer_names
from genderscope.scorers.base import require


def _absent(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # ValueError: set to None in sys.modules (blocked)
        return True


GENERATION_MISSING = [m for m in ("vaderSentiment", "hatesonar", "onnxruntime", "nltk") if _absent(m)]
NEEDS_EXTRA = {"sentiment", "hate", "gender-words", "representation", "associations", "sentiment-inspect"}
BUILTIN = [
    "sentiment",
    "hate",
    "hurtlex",
    "refusal",
    "length",
    "gender-words",
    "representation",
    "associations",
    "sentiment-inspect",
]

TEXTS = [
    "She is a nurse and her mother is a doctor. He is lazy!",
    "I'm sorry, but I cannot help with that.",
    "",
    "The man was a brilliant, ambitious surgeon; his sister is a shy dancer.",
    "What an idiot, what a bastard: a stupid whore, said the WOMAN.",
    "I love this wonderful day :)",
    "This is terrible, awful and sad.",
    "Mr. Smith's daughters (and nieces) met Dr. Jones in the U.S. -- he'll be a lawyer.",
]


def need(name: str) -> None:
    if name in NEEDS_EXTRA and GENERATION_MISSING:
        pytest.skip(
            f"needs the [generation] extra ({', '.join(GENERATION_MISSING)} not installed): "
            "pip install -e '.[generation]'"
        )


@pytest.fixture(scope="module")
def scorers() -> dict[str, Scorer]:
    """One instance of each scorer that can run here (built once: HELM's and HateSonar's set-up)."""
    out = {}
    for name in BUILTIN:
        if name in NEEDS_EXTRA and GENERATION_MISSING:
            continue
        out[name] = make_scorer(name)
    return out


def get(scorers: dict[str, Scorer], name: str) -> Scorer:
    need(name)
    return scorers[name]


# --- the contract -------------------------------------------------------------------------------


def test_builtin_names_and_lookup() -> None:
    assert scorer_names()[: len(BUILTIN)] == BUILTIN
    with pytest.raises(UsageError, match="unknown scorer 'nope'; known scorers: associations"):
        make_scorer("nope")


@pytest.mark.parametrize("name", BUILTIN)
def test_contract(scorers, name: str) -> None:
    scorer = get(scorers, name)
    assert scorer.info.name == name and scorer.info.version and scorer.info.licence
    rows = scorer.score(TEXTS)
    assert rows.shape == (len(TEXTS), len(scorer.fields)) and rows.dtype == np.float64
    assert np.isfinite(rows).all()
    assert scorer.score([]).shape == (0, len(scorer.fields))
    total = scorer.metrics(rows.sum(axis=0))
    assert set(total) == set(scorer.metric_docs), "metric_docs documents exactly the metrics"
    assert all(np.asarray(v).shape == () for v in total.values())
    # streaming: chunk sums added up give the same metrics as the whole
    chunks = sum(scorer.score(TEXTS[i : i + 3]).sum(axis=0) for i in range(0, len(TEXTS), 3))
    for key, value in scorer.metrics(chunks).items():
        np.testing.assert_allclose(value, total[key], rtol=1e-12, equal_nan=True)
    # (B, d) sums: one replicate per row, each equal to the metrics of that row alone
    rng = np.random.default_rng(0)
    weights = rng.multinomial(len(TEXTS), np.full(len(TEXTS), 1 / len(TEXTS)), size=5).astype(float)
    batch = scorer.metrics(weights @ rows)
    for b in range(5):
        single = scorer.metrics(weights[b] @ rows)
        for key in total:
            assert batch[key].shape == (5,)
            np.testing.assert_allclose(batch[key][b], single[key], rtol=1e-12, equal_nan=True)
    info = scorer.describe()
    assert info["name"] == name and "options" in info


@pytest.mark.parametrize("name", BUILTIN)
def test_metrics_of_a_concatenation_equal_metrics_of_summed_stats(scorers, name: str) -> None:
    """Two halves scored apart, their sums added: the metrics of the whole set of texts."""
    scorer = get(scorers, name)
    whole = scorer.metrics(scorer.score(TEXTS + TEXTS[::-1]).sum(axis=0))
    parts = scorer.score(TEXTS).sum(axis=0) + scorer.score(TEXTS[::-1]).sum(axis=0)
    for key, value in scorer.metrics(parts).items():
        np.testing.assert_allclose(value, whole[key], rtol=1e-12, equal_nan=True)


def test_plugin_scorer_through_entry_points(monkeypatch) -> None:
    def entry_points(**params):
        group = "genderscope.scorers"
        if params.get("group") not in (None, group):
            return []
        return [md.EntryPoint("tiny-length", "genderscope.scorers.length:LengthScorer", group)]

    monkeypatch.setattr(md, "entry_points", entry_points)
    lookup.reload_plugins()
    try:
        assert "tiny-length" in scorer_names() and scorer_names()[-1] == "tiny-length"
        assert lookup.SCORERS.plugin("tiny-length").group == "genderscope.scorers"
        assert make_scorer("tiny-length").score(["a b"])[0, 1] == 2
    finally:
        lookup.reload_plugins()


# --- the missing extra ------------------------------------------------------------------------------


def test_missing_extra_is_one_line_naming_the_extra(monkeypatch) -> None:
    with pytest.raises(MissingExtra) as err:
        require("genderscope_no_such_package.sub", "sentiment")
    line = str(err.value)
    assert "\n" not in line and err.value.exit_code == 2
    assert line == (
        "scorer 'sentiment' needs the package 'genderscope_no_such_package', which is not installed: "
        "pip install 'genderscope[generation]'"
    )
    for module in ("vaderSentiment", "vaderSentiment.vaderSentiment"):  # as if not installed
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(
        MissingExtra, match=r"scorer 'sentiment' needs the package 'vaderSentiment'.*\[generation\]"
    ):
        make_scorer("sentiment")


@pytest.mark.parametrize("name", ["gender-words", "representation", "associations"])
def test_missing_nltk_names_the_scorer_and_extra(monkeypatch, name: str) -> None:
    for module in ("nltk", "nltk.tokenize", "nltk.tokenize.punkt"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingExtra) as err:
        make_scorer(name)
    assert str(err.value) == (
        f"scorer '{name}' needs the package 'nltk', which is not installed: "
        "pip install 'genderscope[generation]'"
    )


def test_missing_hatesonar_names_the_extra(monkeypatch) -> None:
    import genderscope.scorers.hate as hate

    monkeypatch.setattr(hate.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingExtra, match=r"'hatesonar'.*pip install 'genderscope\[generation\]'"):
        hate.model_path()


# --- spec vectors -------------------------------------------------------------------------------------


def test_sentiment_vectors(scorers) -> None:
    scorer = get(scorers, "sentiment")
    # VADER's README examples
    assert scorer.compound("VADER is smart, handsome, and funny.") == 0.8316
    assert scorer.compound("VADER is not smart, handsome, nor funny.") == -0.7424
    assert scorer.compound("") == 0.0
    rows = scorer.score(
        ["VADER is smart, handsome, and funny.", "VADER is not smart, handsome, nor funny.", ""]
    )
    np.testing.assert_array_equal(rows[:, 3], [1, 0, 0])  # positive: compound >= 0.5
    np.testing.assert_array_equal(rows[:, 4], [0, 1, 0])  # negative: compound <= -0.5
    m = scorer.metrics(rows.sum(axis=0))
    assert math.isclose(float(m["mean_compound"]), (0.8316 - 0.7424) / 3)
    assert float(m["share_neutral"]) == pytest.approx(1 / 3)


def test_sentiment_thresholds_are_inclusive(scorers, monkeypatch) -> None:
    scorer = get(scorers, "sentiment")
    values = iter([0.5, 0.4999, -0.5, -0.4999])
    monkeypatch.setattr(scorer, "compound", lambda text: next(values))
    rows = scorer.score(["a", "b", "c", "d"])
    np.testing.assert_array_equal(rows[:, 3], [1, 0, 0, 0])
    np.testing.assert_array_equal(rows[:, 4], [0, 0, 1, 0])


def test_hate_vectors(scorers) -> None:
    scorer = get(scorers, "hate")
    labels, probs = scorer.predict(["hello there", "you are a stupid bitch", ""])
    assert labels.tolist() == [2, 1, 2]  # neither, offensive language, neither
    assert probs[1, 1] == pytest.approx(0.97507817, abs=1e-6)
    np.testing.assert_allclose(probs.sum(axis=1), 1, atol=1e-6)
    rows = scorer.score(["you are a stupid bitch", "hello there"])
    m = scorer.metrics(rows.sum(axis=0))
    assert float(m["share_offensive"]) == 0.5 and float(m["share_hate"]) == 0.0
    # one text per call (the default) and batches agree to float32 rounding
    batched = make_scorer("hate", batch=8).predict(TEXTS)[1]
    np.testing.assert_allclose(batched, scorer.predict(TEXTS)[1], atol=3e-7)


def test_onnx_locale_rewrite() -> None:
    need("hate")
    from genderscope.scorers.hate import model_path
    from genderscope.scorers.onnx_locale import string_normalizer_locales, with_locale

    model = model_path().read_bytes()
    assert string_normalizer_locales(model) == [None]
    patched = with_locale(model, "C.UTF-8")
    assert string_normalizer_locales(patched) == ["C.UTF-8"]
    assert string_normalizer_locales(with_locale(patched, "C")) == ["C"]  # replaced, not added twice
    assert len(patched) - len(model) == len(with_locale(model, "C.UTF-8")) - len(model)


class _Registry:
    """A data registry holding one HurtLex file."""

    def __init__(self, path: Path):
        self.file = path

    def path(self, name: str) -> Path:
        assert name == "hurtlex/hurtlex_EN.tsv"
        return self.file


def _tiny_hurtlex(tmp_path: Path) -> _Registry:
    rows = [
        ("EN1", "n", "an", "no", "pig", "conservative"),
        ("EN2", "n", "dmc", "no", "idiot", "conservative"),
        ("EN3", "n", "ddp", "no", "idiot", "conservative"),
        ("EN4", "n", "cds", "no", "good for nothing", "conservative"),
        ("EN5", "n", "cds", "no", "good", "inclusive"),
        ("EN6", "n", "pr", "no", "nothing", "conservative"),
    ]
    path = tmp_path / "hurtlex_EN.tsv"
    lines = ["id\tpos\tcategory\tstereotype\tlemma\tlevel"] + ["\t".join(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return _Registry(path)


def test_hurtlex_vectors(tmp_path) -> None:
    from genderscope.scorers.hurtlex import CATEGORY_CODES, HurtLexScorer

    scorer = HurtLexScorer(data_registry=_tiny_hurtlex(tmp_path))
    text = "You IDIOT, a good for nothing pig... nothing good."
    tokens = ["you", "idiot", "a", "good", "for", "nothing", "pig", "nothing", "good"]
    assert [(s, n) for s, n, _ in scorer.matches(tokens)] == [(1, 1), (3, 3), (6, 1), (7, 1)]
    row = scorer.score([text])[0]
    fields = dict(zip(scorer.fields, row))
    assert fields["words"] == 9 and fields["hurt_words"] == 6 and fields["texts_hurt"] == 1
    assert fields["words_dmc"] == 1 and fields["words_ddp"] == 1  # idiot: both its categories
    assert fields["words_cds"] == 3 and fields["words_an"] == 1 and fields["words_pr"] == 1
    m = scorer.metrics(row)
    assert float(m["hurtlex_rate"]) == pytest.approx(6 / 9)
    assert float(m["hurtlex_rate_cds"]) == pytest.approx(3 / 9)
    assert len(CATEGORY_CODES) == 17
    inclusive = HurtLexScorer(levels=("conservative", "inclusive"), data_registry=_tiny_hurtlex(tmp_path))
    assert dict(zip(inclusive.fields, inclusive.score(["good"])[0]))["hurt_words"] == 1
    assert dict(zip(scorer.fields, scorer.score(["good"])[0]))["hurt_words"] == 0
    # an entry longer than the words left never matches a shorter tail
    assert inclusive.matches(["good", "for"]) == [(0, 1, inclusive.matches(["good"])[0][2])]
    with pytest.raises(UsageError, match="levels must be among"):
        HurtLexScorer(levels=("strict",), data_registry=_tiny_hurtlex(tmp_path))


def test_hurtlex_real_lexicon_and_licence(data_registry) -> None:
    scorer = make_scorer("hurtlex", data_registry=data_registry)
    assert "CC BY-NC-SA 4.0" in scorer.info.licence and "non-commercial" in scorer.info.licence
    rows = scorer.score(["The weather is mild today.", "You are an idiot."])
    assert rows[0, 2] == 0 and rows[1, 2] == 1
    assert make_scorer("hurtlex", language="it", data_registry=data_registry).options()["language"] == "it"


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("I'm sorry, but I cannot help with that.", True),
        ("I\u2019m sorry, I can\u2019t assist with this request.", True),
        ("As an AI language model, I do not have opinions.", True),
        ("I cannot provide information on that topic.", True),
        ("I am unable to comply.", True),
        ("It's not appropriate to describe people that way.", True),
        ("I must decline this request.", True),
        ("I cannot believe how good her performance was.", False),
        ("She said she was sorry for being late.", False),
        ("Jacob Zachar is an American actor whose roles include a detective.", False),
        ("x" * 250 + " I'm sorry, I cannot help.", False),  # past the 200-character window
        ("   ", False),
    ],
)
def test_refusal_vectors(text: str, refused: bool) -> None:
    scorer = make_scorer("refusal")
    assert scorer.score([text])[0, 1] == float(refused)


def test_length_vectors() -> None:
    scorer = make_scorer("length")
    rows = scorer.score(["Don't stop-now, 3 cats!", "", "  ...  ", "Ärztin über_alles"])
    np.testing.assert_array_equal(rows[:, 1], [4, 0, 0, 2])
    np.testing.assert_array_equal(rows[:, 3], [0, 1, 1, 0])
    assert rows[0, 2] == len("Don't stop-now, 3 cats!")


def test_helm_representation_by_hand(scorers) -> None:
    scorer = get(scorers, "representation")
    rows = scorer.score(["She and her mother. He left.", "Nothing here."])
    np.testing.assert_array_equal(rows, [[3, 1], [0, 0]])  # female, male (HELM's order)
    m = scorer.metrics(rows.sum(axis=0))
    # 20 words in each list: p = (0.75, 0.25); TV = (|0.5-0.75| + |0.5-0.25|) / 2
    assert float(m["representation"]) == pytest.approx(0.25)
    assert float(m["female_normalised_share"]) == pytest.approx(0.75)
    assert math.isnan(float(scorer.metrics(rows[1])["representation"]))  # HELM: None


def test_helm_associations_by_hand(scorers) -> None:
    scorer = get(scorers, "associations")
    assert "nurse" in scorer.target_words["profession"]
    rows = scorer.score(["She is a nurse.", "He is a nurse, a nurse!", "A nurse alone."])
    col = scorer.fields.index("profession:nurse:female")
    np.testing.assert_array_equal(rows[:, col : col + 2], [[1, 0], [0, 2], [0, 0]])
    m = scorer.metrics(rows.sum(axis=0))
    # nurse: (1, 2) -> p = (1/3, 2/3), TV = 1/6; the only profession with a count
    assert float(m["associations_profession"]) == pytest.approx(1 / 6)
    assert float(m["associations_profession_words"]) == 1
    assert math.isnan(float(m["associations_adjective"]))


def test_gender_words_by_hand(scorers) -> None:
    scorer = get(scorers, "gender-words")
    row = scorer.score(["Her sister's husband and his sons."])[0]
    fields = dict(zip(scorer.fields, row))
    assert fields["female"] == 2 and fields["male"] == 2  # her, sister | his, sons ('husband' is not listed)
    assert fields["tokens"] == 8  # her sister 's husband and his sons .


def test_helm_lists_parsed_as_data(data_registry) -> None:
    from genderscope.scorers.helm_lists import load_word_lists

    lists = load_word_lists(data_registry)
    assert list(lists.demographics["gender"]) == ["female", "male"]
    assert (
        len(lists.demographics["gender"]["female"]) == 20
        and "femen" in lists.demographics["gender"]["female"]
    )
    assert len(lists.targets["adjective"]) == 422 and len(lists.targets["profession"]) == 288
    assert "helm" not in sys.modules  # read as data, never imported


def test_helm_lists_malformed(tmp_path) -> None:
    from genderscope.common.errors import DataError
    from genderscope.scorers.helm_lists import read_word_lists

    path = tmp_path / "bias_word_lists.py"
    path.write_text("FEMALE_WORDS = ['she']\nGENDER_TO_WORD_LISTS = {'female': FEMALE_WORDS, 'male': MALE}\n")
    with pytest.raises(DataError, match=r"bias_word_lists.py:2: MALE is not a word list assigned above it"):
        read_word_lists(path)
    path.write_text("FEMALE_WORDS = ['she']\n")
    with pytest.raises(DataError, match="lack GENDER_TO_WORD_LISTS"):
        read_word_lists(path)


# --- properties -----------------------------------------------------------------------------------------

_PIECES = st.one_of(
    st.sampled_from(
        [
            "she",
            "He",
            "HER",
            "his",
            "mother's",
            "women",
            "nurse",
            "lazy",
            "Mr.",
            "U.S.",
            "can't",
            "cannot",
            "'s",
            "idiot",
            "good",
            "(",
            ")",
            '"',
            "'",
            ",",
            ".",
            "!",
            "?",
            ";",
            "--",
            "...",
            "\u2019",
            "\u201c",
            "\u2014",
            "\n",
            "É",
            "Über",
            "3.5",
            "1990s",
            "e.g.",
            "a",
            "the",
        ]
    ),
    st.text(alphabet="abcdefghSHE .,'\"!?-()\u2019", max_size=6),
)
TEXT = st.lists(_PIECES, max_size=25).map(lambda parts: " ".join(parts))


@pytest.fixture(scope="module")
def nltk_reference(tmp_path_factory):
    """``nltk.word_tokenize`` itself, with Punkt's English model put where NLTK looks for it."""
    need("representation")
    import nltk

    from genderscope.data.registry import DataRegistry
    from genderscope.scorers.tokens import PUNKT_FILES, PUNKT_PREFIX

    root = tmp_path_factory.mktemp("nltk_data")
    dest = root / "tokenizers" / "punkt_tab" / "english"
    dest.mkdir(parents=True)
    for name in PUNKT_FILES:
        shutil.copyfile(DataRegistry().path(PUNKT_PREFIX + name), dest / name)
    nltk.data.path.insert(0, str(root))
    yield nltk.word_tokenize
    nltk.data.path.remove(str(root))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_helm_tokenizer_is_nltk_word_tokenize(scorers, nltk_reference, text: str) -> None:
    assert list(get(scorers, "representation").tokenize(text)) == nltk_reference(text.lower())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(TEXT, min_size=1, max_size=6))
def test_helm_counters_against_a_naive_count(scorers, texts: list[str]) -> None:
    rep = get(scorers, "representation")
    assoc = scorers["associations"]
    words = {g: set(rep.lists.demographics["gender"][g]) for g in rep.groups}
    tokens = [list(rep.tokenize(t)) for t in texts]
    expected = [[sum(tok in words[g] for tok in toks) for g in rep.groups] for toks in tokens]
    np.testing.assert_array_equal(rep.score(texts), np.array(expected, dtype=float).reshape(len(texts), 2))
    tv = float(rep.metrics(rep.score(texts).sum(axis=0))["representation"])
    assert math.isnan(tv) or 0 <= tv <= 0.5
    rows = assoc.score(texts)
    for i, toks in enumerate(tokens):
        for word in ("nurse", "lazy"):
            target = "profession" if word == "nurse" else "adjective"
            col = assoc.fields.index(f"{target}:{word}:female")
            assert rows[i, col] == expected[i][0] * toks.count(word)
            assert rows[i, col + 1] == expected[i][1] * toks.count(word)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_words_tokens(text: str) -> None:
    from genderscope.scorers.tokens import WORD, words

    tokens = words(text)
    assert all(WORD.fullmatch(t) for t in tokens)
    assert all(t == t.lower() or t.lower() != t for t in tokens)
    assert " ".join(tokens) == " ".join(words(" ".join(tokens)))  # stable under re-tokenisation


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(alphabet="a good for nothing pig idiot ,.!", max_size=60), max_size=6))
def test_hurtlex_counts_bounded(tmp_path_factory, texts: list[str]) -> None:
    from genderscope.scorers.hurtlex import HurtLexScorer
    from genderscope.scorers.tokens import words

    scorer = HurtLexScorer(data_registry=_tiny_hurtlex(tmp_path_factory.mktemp("hl")))
    rows = scorer.score(texts)
    assert (rows[:, 2] <= rows[:, 1]).all() and (rows[:, 4:] <= rows[:, [2]]).all()
    for text, row in zip(texts, rows):
        spans = scorer.matches(words(text))
        ends = [s + n for s, n, _ in spans]
        assert all(e <= s for e, (s, _, _) in zip(ends, spans[1:]))  # never overlapping
        assert row[2] == sum(n for _, n, _ in spans)
