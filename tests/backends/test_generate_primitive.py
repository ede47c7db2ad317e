"""The ``generate`` primitive: payload and answer checks, the prompt shown in attempts, the random null
model's unigram sample (seeded, follows the corpus frequencies, temperature / top-p, fallback to the
prompt's words), and replay of recorded answers through the runner."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from genderscope.backends.random_model import RandomBackend, RandomOptions, Unigram
from genderscope.backends.replay import ReplayBackend, ReplayOptions
from genderscope.core.primitives import GENERATE, KINDS, ProtocolError, check_payload, response_problem
from genderscope.core.requests import Attempt, Job
from genderscope.core.request_value import Request
from genderscope.core.runner import execute


def _payload(**kw):
    return {"prompt": "the man said", "max_tokens": 5, "seed": 7, **kw}


def test_generate_is_a_declared_kind() -> None:
    assert GENERATE == "generate" and GENERATE in KINDS
    assert GENERATE in RandomBackend.request_kinds and GENERATE in ReplayBackend.request_kinds


@pytest.mark.parametrize(
    "payload",
    [
        _payload(),
        _payload(temperature=0, top_p=0.9),
        _payload(prompt="", max_tokens=0, temperature=0.7, top_p=1.0),
    ],
)
def test_valid_payloads_pass(payload) -> None:
    check_payload(GENERATE, payload)


@pytest.mark.parametrize(
    "payload, what",
    [
        ({"max_tokens": 5, "seed": 1}, "prompt"),
        ({"prompt": 3, "max_tokens": 5, "seed": 1}, "prompt"),
        ({"prompt": "x", "seed": 1}, "max_tokens"),
        (_payload(max_tokens=True), "max_tokens"),
        (_payload(max_tokens=-1), "max_tokens"),
        (_payload(max_tokens=2.0), "max_tokens"),
        ({"prompt": "x", "max_tokens": 5}, "seed"),
        (_payload(seed="1"), "seed"),
        (_payload(temperature=-0.1), "temperature"),
        (_payload(temperature="hot"), "temperature"),
        (_payload(top_p=0), "top_p"),
        (_payload(top_p=1.5), "top_p"),
    ],
)
def test_invalid_payloads_name_the_field(payload, what) -> None:
    with pytest.raises(ProtocolError, match=what):
        check_payload(GENERATE, payload)


def test_response_checks() -> None:
    assert response_problem(GENERATE, {"text": " a b", "n_tokens": 2, "finish_reason": "length"}) is None
    assert response_problem(GENERATE, {"text": "", "n_tokens": 0, "finish_reason": "stop"}) is None
    for bad in (
        "just text",
        None,
        {"text": "a", "n_tokens": 1},
        {"text": "a", "n_tokens": "1", "finish_reason": "stop"},
        {"text": "a", "n_tokens": -1, "finish_reason": "stop"},
        {"text": "a", "n_tokens": 1, "finish_reason": "eos"},
        {"text": None, "n_tokens": 1, "finish_reason": "stop"},
    ):
        assert response_problem(GENERATE, bad) is not None, bad


def test_prompt_text_of_a_generate_request() -> None:
    assert Request(GENERATE, _payload(prompt="she said")).prompt_text == "she said"


# ------------------------------------------------------------------ random: the unigram null model


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    f = tmp_path / "corpus.txt"
    f.write_text("a a a a a a b b b c\n" * 50 + "<eos> a a a a a a b b b c\n" * 50)
    return f


def _answer(backend, payloads: list[dict]) -> list:
    got: dict[int, object] = {}
    jobs = [Job(i, Request(GENERATE, p), 1, f"i{i}") for i, p in enumerate(payloads)]
    backend.answer(jobs, lambda job, out: got.__setitem__(job.index, out))
    return [got[i] for i in range(len(jobs))]


def test_random_unigram_follows_corpus_frequencies_and_is_seeded(corpus: Path) -> None:
    be = RandomBackend("", RandomOptions(unigram=str(corpus)))
    (out,) = _answer(be, [_payload(max_tokens=20000, seed=3)])
    assert out.ok and response_problem(GENERATE, out.response) is None
    words = out.response["text"].split()
    assert out.response["n_tokens"] == len(words) == 20000 and out.response["finish_reason"] == "length"
    freq = Counter(words)
    assert set(freq) == {"a", "b", "c"}  # <eos> is not a word of the null text
    for w, p in (("a", 0.6), ("b", 0.3), ("c", 0.1)):
        assert abs(freq[w] / 20000 - p) < 0.015, (w, freq[w])
    # the sample depends on the seeds only: not on the prompt, the item or the batch
    again = _answer(be, [_payload(prompt="other", max_tokens=30, seed=4), _payload(max_tokens=30, seed=3)])
    alone = _answer(RandomBackend("", RandomOptions(unigram=str(corpus))), [_payload(max_tokens=30, seed=3)])
    assert again[1].response == alone[0].response
    assert again[0].response != again[1].response
    other_null_seed = _answer(
        RandomBackend("1", RandomOptions(unigram=str(corpus))), [_payload(max_tokens=30)]
    )
    assert other_null_seed[0].response != _answer(be, [_payload(max_tokens=30)])[0].response


def test_random_unigram_temperature_and_top_p(corpus: Path) -> None:
    be = RandomBackend("", RandomOptions(unigram=str(corpus)))
    greedy, nucleus, hot = _answer(
        be,
        [
            _payload(max_tokens=8, temperature=0),
            _payload(max_tokens=500, top_p=0.5),
            _payload(max_tokens=20000, temperature=1e6),
        ],
    )
    assert greedy.response["text"] == "a " * 7 + "a"
    assert set(nucleus.response["text"].split()) == {"a"}
    flat = Counter(hot.response["text"].split())  # T -> inf: uniform over the word types
    assert all(abs(flat[w] / 20000 - 1 / 3) < 0.02 for w in "abc")


def test_random_without_a_corpus_samples_the_prompt_words() -> None:
    be = RandomBackend("", RandomOptions())
    words, empty = _answer(
        be, [_payload(prompt="he she he", max_tokens=300), _payload(prompt=" ", max_tokens=4)]
    )
    assert set(words.response["text"].split()) == {"he", "she"}
    assert empty.response == {"text": "", "n_tokens": 0, "finish_reason": "stop"}


def test_random_samples_the_corpus_the_request_names(corpus: Path) -> None:
    """Without --unigram the null model uses the task's reference corpus from ``hints["corpus"]``."""
    be = RandomBackend("", RandomOptions())
    got: dict[int, object] = {}
    jobs = [
        Job(
            0,
            Request(GENERATE, _payload(prompt="he she", max_tokens=3000), hints={"corpus": str(corpus)}),
            1,
            "i0",
        ),
        Job(
            1, Request(GENERATE, _payload(max_tokens=5), hints={"corpus": str(corpus) + ".missing"}), 1, "i1"
        ),
    ]
    be.answer(jobs, lambda job, out: got.__setitem__(job.index, out))
    assert set(got[0].response["text"].split()) == {"a", "b", "c"}
    assert not got[1].ok and "unigram corpus" in got[1].error
    # --unigram wins over the hint
    pinned = RandomBackend("", RandomOptions(unigram=str(corpus)))
    assert _answer(pinned, [_payload(max_tokens=30)])[0].response == got_first(be, corpus)


def got_first(be: RandomBackend, corpus: Path) -> object:
    got: dict[int, object] = {}
    job = Job(0, Request(GENERATE, _payload(max_tokens=30), hints={"corpus": str(corpus)}), 1, "i0")
    be.answer([job], lambda j, out: got.__setitem__(0, out))
    return got[0].response


def test_unigram_reads_a_registry_corpus(data_registry_available) -> None:
    u = Unigram.from_corpus("ptb:valid")
    assert u.tokens.size == sum(u.counts) and "<eos>" not in set(u.types) and u.types[0] == "consumers"


@pytest.fixture()
def data_registry_available() -> None:
    from genderscope.common.errors import DataError
    from genderscope.data.registry import DataRegistry

    try:
        DataRegistry().path("corpora/ptb/ptb.valid.txt")
    except DataError:
        pytest.skip("PTB valid not in the data mirror")


# ------------------------------------------------------------------ replay and the runner


def test_replay_answers_generate_and_rejects_malformed_answers(tmp_path: Path) -> None:
    good = {"text": " and she left", "n_tokens": 3, "finish_reason": "length"}
    lines = [
        {"task": "t", "item_id": "p0", "trial": 1, "prompt": "the man said", "response": good},
        {"task": "t", "item_id": "p1", "trial": 1, "prompt": "the woman said", "response": "plain text"},
    ]
    f = tmp_path / "attempts.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    attempts = [
        Attempt("p0", 1, Request(GENERATE, _payload())),
        Attempt("p1", 1, Request(GENERATE, _payload(prompt="the woman said"))),
        Attempt("p2", 1, Request(GENERATE, {"prompt": "x", "max_tokens": 3})),  # no seed: never sent
    ]
    ex = execute(attempts, ReplayBackend(str(f), ReplayOptions(replay_missing="skip")), None)
    assert ex.results[0].response == good and ex.results[0].error is None
    assert "malformed generate answer" in ex.results[1].error
    assert "invalid generate request" in ex.results[2].error and "seed" in ex.results[2].error
    # a regenerated prompt that differs from the recorded one is a stale entry
    stale = [Attempt("p0", 1, Request(GENERATE, _payload(prompt="the boy said")))]
    with pytest.raises(Exception, match="stale"):
        execute(stale, ReplayBackend(str(f), ReplayOptions()), None)
