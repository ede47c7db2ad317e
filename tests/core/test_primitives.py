"""The typed protocol: constructors build the payloads tasks sent before (same store keys), views read
the answers, the docs table is the one generated from the declarations, rounds replay in order."""

from __future__ import annotations

from repo_paths import ROOT
import re
import typing

import pytest

from genderscope.core import primitives as P
from genderscope.core import requests as Q
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.request_value import Request
from genderscope.core.rounds import Answers, Round, Rounds



def test_kind_names_agree():
    assert set(P.KINDS) == {
        P.CHAT, P.TOKENIZE, P.TOKEN_LOGPROBS, P.FILL_MASK, P.MASKED_LOGPROBS, P.GENERATE, P.LOGLIKELIHOOD,
        P.TRANSLATE,
    }
    got = P.translate_request("I am tired.", "cs").payload
    assert got == {"text": "I am tired.", "source": "en", "target": "cs"}


@pytest.mark.parametrize(
    "built, raw",
    [
        (
            P.chat_request("q", temperature=1.0, max_tokens=300, top_p=1.0, choices=["(a)"]),
            Request(
                "chat",
                {
                    "messages": [{"role": "user", "content": "q"}],
                    "temperature": 1.0,
                    "max_tokens": 300,
                    "top_p": 1.0,
                },
            ),
        ),
        (
            P.chat_request("q", temperature=1, max_tokens=16),
            Request(
                "chat", {"messages": [{"role": "user", "content": "q"}], "temperature": 1, "max_tokens": 16}
            ),
        ),
        (P.tokenize_request(""), Request("tokenize", {"text": ""})),
        (
            P.tokenize_request("a b", add_special_tokens=True),
            Request("tokenize", {"text": "a b", "add_special_tokens": True}),
        ),
        (P.tokenize_request("a", lookup=["hans"]), Request("tokenize", {"text": "a", "lookup": ["hans"]})),
        (P.token_logprobs_request("x"), Request("token_logprobs", {"text": "x"})),
        (P.fill_mask_request("a <mask>", top_k=1), Request("fill_mask", {"text": "a <mask>", "top_k": 1})),
        (
            P.fill_mask_request(ids=[1, 2], position=1, top_k=1),
            Request("fill_mask", {"ids": [1, 2], "position": 1, "top_k": 1}),
        ),
        (
            P.text_score_request("t", P.MASKED_LOGPROBS),
            Request("masked_logprobs", {"text": "t", "mask": "each"}),
        ),
        (P.text_score_request("t", P.TOKEN_LOGPROBS), Request("token_logprobs", {"text": "t"})),
        (
            P.masked_logprobs_request(ids=[1, 2], positions=[0, 1], targets=[1, 3], mask="none"),
            Request(
                "masked_logprobs", {"ids": [1, 2], "positions": [0, 1], "targets": [1, 3], "mask": "none"}
            ),
        ),
        (
            P.generate_request("p", max_tokens=5, seed=3, temperature=1.0, top_p=0.9, hints={"corpus": "c"}),
            Request(
                "generate", {"prompt": "p", "max_tokens": 5, "temperature": 1.0, "top_p": 0.9, "seed": 3}
            ),
        ),
        (Q.given_request(0.5, "s"), Request("given", {"value": 0.5, "text": "s"})),
    ],
)
def test_constructors_keep_the_canonical_request(built, raw):
    """Same canonical text = same store key and seed as the hand-built dicts of earlier runs."""
    assert built.canonical() == raw.canonical()
    if built.kind in P.KINDS:
        P.check_payload(built.kind, built.payload)


def test_hints_are_not_part_of_the_request():
    a = P.chat_request("q", choices=["(a)", "(b)"])
    assert a.hints == {"choices": ["(a)", "(b)"]} and a == P.chat_request("q")
    assert P.generate_request("p", max_tokens=1, seed=0, hints={"corpus": "ptb"}).hints == {"corpus": "ptb"}


def test_text_score_request_rejects_other_kinds():
    with pytest.raises(ValueError, match="does not score texts"):
        P.text_score_request("t", P.FILL_MASK)


def test_views_read_answers():
    tok = P.read_answer(
        "tokenize",
        {
            "ids": [5, 6],
            "tokens": ["a", "[MASK]"],
            "lookup": [7, None],
            "specials": {"mask": "[MASK]", "cls": "[CLS]"},
            "unk_id": 1,
            "dtype": "float32",
        },
    )
    assert isinstance(tok, P.Tokens) and tok.ids == [5, 6] and tok.lookup == [7, None]
    assert (
        tok.specials.mask == "[MASK]"
        and tok.specials.strings() == {"[MASK]", "[CLS]"}
        and tok.dtype == "float32"
    )
    lp = P.TokenLogprobs.of({"tokens": ["a"], "offsets": [[0, 1]], "logprobs": [None]})
    assert lp.logprobs == [None] and lp.offsets == [[0, 1]]
    fm = P.FillMask.of(
        {
            "ids": [1],
            "position": 0,
            "top": [
                {"id": 3, "token": "Ġhe", "str": " he", "text": " he", "continuation": False, "logprob": -0.1}
            ],
        }
    )
    assert fm.top[0] == P.Prediction(3, "Ġhe", " he", " he", False, -0.1)
    ml = P.MaskedLogprobs.of({"ids": [1], "positions": [0], "logprobs": [-1.5], "loss": 1.5})
    assert (ml.positions, ml.logprobs, ml.loss) == ([0], [-1.5], 1.5)
    gen = P.Generation.of({"text": " x", "n_tokens": 1, "finish_reason": "stop"})
    assert (gen.text, gen.n_tokens, gen.finish_reason) == (" x", 1, "stop")
    assert P.ChatReply.of("yes").text == "yes" and P.ChatReply.of(None).text is None
    assert P.ChatReply.of({"content": "c", "finish_reason": "length"}) == P.ChatReply("c", "length")
    with pytest.raises(KeyError):
        P.TokenLogprobs.of({"tokens": []})  # a view reads checked answers; a malformed one fails loudly
    with pytest.raises(P.ProtocolError, match="unknown request kind"):
        P.read_answer("nope", {})


def test_attempt_result_answer_reads_by_kind():
    ar = AttemptResult(
        Attempt("i", 1, P.token_logprobs_request("a")),
        response={"tokens": ["a"], "offsets": [[0, 1]], "logprobs": [-2.0]},
    )
    assert ar.answer() == P.TokenLogprobs(["a"], [[0, 1]], [-2.0])


def test_every_kind_declares_a_view_and_documents_every_field():
    for name, spec in P.KINDS.items():
        assert hasattr(spec.view, "of"), name
        for field in typing.get_type_hints(spec.payload):
            assert f"`{field}`" in spec.payload_doc, (name, field)
        if spec.response is not str:
            for field in typing.get_type_hints(spec.response):
                assert f"`{field}`" in spec.response_doc, (name, field)


def test_architecture_table_is_generated_from_the_declarations():
    from genderscope.core.matrix import backend_request_kinds, kinds_markdown

    if any(v is None for v in backend_request_kinds().values()):
        pytest.skip("a backend module cannot be imported here, so its column is unknown")
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    got = re.search(r"<!-- kinds table:[^\n]*-->\n(.*?)\n<!-- end kinds table -->", doc, re.S)
    assert got is not None, "docs/architecture.md lost its kinds table markers"
    assert got.group(1) == kinds_markdown(), "regenerate: python -m genderscope.core.matrix kinds"


# ---------------------------------------------------------------- rounds


def _plan(log: list[str]) -> Rounds:
    def first(ans: Answers) -> list[Attempt]:
        return [Attempt("info", 1, P.tokenize_request(""))]

    def second(ans: Answers) -> list[Attempt]:
        info = ans.first("info")
        assert info is not None and info.response == "R0"
        log.append("second")
        return [Attempt(f"x/{i}", 1, P.tokenize_request(str(i)), {"i": i}) for i in range(2)]

    def third(ans: Answers) -> list[Attempt]:
        got = [ar.attempt.meta["i"] for ar in ans.of("encode") if ar.ok]
        return [Attempt(f"x/{i}/fill", 1, P.fill_mask_request(ids=[1], position=0)) for i in got]

    return Rounds(Round("info", first), Round("encode", second), Round("fill", third))


def test_rounds_ask_in_order_and_stamp_the_round():
    log: list[str] = []
    plan = _plan(log)
    results: list[AttemptResult] = []
    attempts = plan.first()
    while attempts:
        results += [
            AttemptResult(a, response=f"R{a.round}", error="down" if a.item_id == "x/1" else None)
            for a in attempts
        ]
        attempts = plan.next(results)
    assert [(r.attempt.item_id, r.attempt.round) for r in results] == [
        ("info", 0),
        ("x/0", 1),
        ("x/1", 1),
        ("x/0/fill", 2),
    ]
    assert [plan.name_of(r) for r in results] == ["info", "encode", "encode", "fill"]
    assert plan.answers(results).of("fill")[0].attempt.item_id == "x/0/fill" and log == ["second"]
    assert plan.next([]) == []


def test_a_round_that_asks_nothing_ends_the_run():
    plan = Rounds(
        Round("a", lambda ans: [Attempt("a", 1, P.tokenize_request(""))]), Round("b", lambda ans: [])
    )
    first = plan.first()
    assert plan.next([AttemptResult(first[0], response={})]) == []
