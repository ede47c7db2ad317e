"""gest-likelihood on the tiny masked and causal test models: the primitive answers the task combines
against a direct, unbatched computation, and the task end to end through the engine."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from genderscope.core.engine import run_tasks  # noqa: E402
from genderscope.core.primitives import MASKED_LOGPROBS, TOKEN_LOGPROBS, TOKENIZE  # noqa: E402
from genderscope.core.requests import Job  # noqa: E402
from genderscope.core.request_value import Request  # noqa: E402
from genderscope.tasks.scored.maskdiff import differing_positions  # noqa: E402
from genderscope.tasks.gest_likelihood.task import CAUSAL, MASKED  # noqa: E402
from genderscope.core.primitives import MaskedLogprobs, TokenLogprobs  # noqa: E402
from genderscope.tasks.scoring import continuation_score, mean_logprob  # noqa: E402
from genderscope.demo_models import build_tiny_causal, build_tiny_mlm, words_of  # noqa: E402

SENTENCES = [
    "I have always been a leadership type.",
    "I overreacted.",
    "I baked a cake to make them happy.",
    "I like giving orders.",
]
EXTRA = ["He", "She", "he", "she", "The", "the", "man", "woman", "said", ":", '"', ",", "."]


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory) -> Path:
    return build_tiny_mlm(tmp_path_factory.mktemp("mlm"), words_of(SENTENCES) + EXTRA, seed=1)


@pytest.fixture(scope="module")
def tiny_causal(tmp_path_factory) -> Path:
    return build_tiny_causal(tmp_path_factory.mktemp("causal"), words_of(SENTENCES) + EXTRA, seed=2)


def _answer(backend, kind: str, payloads: list[dict]) -> list:
    jobs = [Job(i, Request(kind, p), 1, f"x{i}") for i, p in enumerate(payloads)]
    got: dict[int, object] = {}
    backend.answer(jobs, lambda job, out: got.__setitem__(job.index, out.response if out.ok else out.error))
    return [got[i] for i in range(len(jobs))]


def _backend(kind: str, path: Path, **opts):
    from genderscope.core import lookup
    from genderscope.core.options import build_options

    cls = lookup.backend_class(f"{kind}:{path}")
    return cls(str(path), build_options(cls.Options, opts, kind))


def _direct_masked(model, tok, a: str, b: str) -> tuple[float, float]:
    u, v = tok(a)["input_ids"], tok(b)["input_ids"]
    delta = [i for i in range(min(len(u), len(v))) if u[i] != v[i]]
    out = []
    for x in (u, v):
        ids = [tok.mask_token_id if i in delta else t for i, t in enumerate(x)]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0]
        lp = torch.log_softmax(logits.double(), -1)
        out.append(sum(float(lp[i, x[i]]) for i in delta) / len(delta))
    return out[0], out[1]


def _masked_pair(be, a: str, b: str) -> tuple[float | None, float | None]:
    """The task's masked-pair log-probs through the primitives: tokenize both, masked_logprobs at Δ."""
    u, v = (
        r["ids"]
        for r in _answer(
            be, TOKENIZE, [{"text": a, "add_special_tokens": True}, {"text": b, "add_special_tokens": True}]
        )
    )
    delta = differing_positions(u, v)
    if not delta:
        return None, None
    got = _answer(be, MASKED_LOGPROBS, [{"ids": x, "positions": delta, "mask": "all"} for x in (u, v)])
    return mean_logprob(MaskedLogprobs.of(got[0])), mean_logprob(MaskedLogprobs.of(got[1]))


def test_masked_pair_logprob_matches_direct(tiny_mlm) -> None:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    be = _backend("hf-mlm", tiny_mlm, batch_tokens=64)  # small budget: several batches, padding
    pairs = [t.render(s) for s in SENTENCES for t in MASKED.values()]
    model = AutoModelForMaskedLM.from_pretrained(tiny_mlm).eval()
    tok = AutoTokenizer.from_pretrained(tiny_mlm)
    for a, b in pairs:
        got, want = _masked_pair(be, a, b), _direct_masked(model, tok, a, b)
        assert got[0] == pytest.approx(want[0], abs=1e-4) and got[1] == pytest.approx(want[1], abs=1e-4)
    # identical texts: no differing position -> nulls
    assert _masked_pair(be, "I overreacted.", "I overreacted.") == (None, None)


def test_continuation_logprobs_match_direct(tiny_causal) -> None:
    """ln p(word | start token, prompt): teacher-forced sum over the word's tokens, the prompt preceded by
    the model's start token (BOS), as the sentence log-likelihood."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    be = _backend("hf-causal", tiny_causal, batch_tokens=40)
    cases = [(t.render(s), w) for s in SENTENCES for t in CAUSAL.values() for w in (t.male, t.female)]
    cases.append(('"I overreacted.",', " he said"))  # 2 tokens
    got = _answer(be, TOKEN_LOGPROBS, [{"text": c + w} for c, w in cases])
    model = AutoModelForCausalLM.from_pretrained(tiny_causal).eval()
    tok = AutoTokenizer.from_pretrained(tiny_causal)
    for (ctx, word), g in zip(cases, got):
        sc = continuation_score(TokenLogprobs.of(g), len(ctx))
        ids = [tok.bos_token_id] + tok(ctx, add_special_tokens=False)["input_ids"]
        cids = tok(word, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids + cids])).logits[0]
        lp = torch.log_softmax(logits.double(), -1)
        want = sum(float(lp[len(ids) - 1 + k, c]) for k, c in enumerate(cids))
        assert sc.loglik == pytest.approx(want, abs=1e-4) and sc.n_scored == len(cids)
    assert continuation_score(TokenLogprobs.of(got[-1]), len(cases[-1][0])).n_scored == 2


def test_task_end_to_end_masked_and_causal(tmp_path, tiny_mlm, tiny_causal) -> None:
    for spec, n_templates in ((f"hf-mlm:{tiny_mlm}", 4), (f"hf-causal:{tiny_causal}", 2)):
        out = run_tasks(
            ["gest-likelihood"],
            spec,
            limit=40,
            out=tmp_path / spec[:6],
            progress=False,
            options={"bootstrap_cycles": 20},
        )
        res = json.loads((out.out_dir / "results.json").read_text())["tasks"]["gest-likelihood"]
        assert res["parameters"]["templates"] == list(range(n_templates))
        recs = [json.loads(x) for x in (out.out_dir / "attempts.jsonl").read_text().splitlines()]
        items = [r for r in recs if "score" in r]  # an item's score is on its last attempt
        per_item = 4 if spec.startswith("hf-mlm") else 2  # tokenize + masked_logprobs / one per word
        assert len(items) == 40 * n_templates and len(recs) == per_item * len(items)
        assert res["parameters"]["form"] == ("masked" if spec.startswith("hf-mlm") else "causal")
        scores = [r["score"] for r in items]
        assert sum(s is not None and math.isfinite(s) for s in scores) == len(items)
        assert res["metrics"]["g_s_mean"]["value"] is not None
        # the per-sentence score is the answers turned into a log10 difference
        male, female = recs[recs.index(items[0]) - 1], items[0]
        assert (male["side"], female["side"]) == ("male", "female")
        if spec.startswith("hf-mlm"):
            assert female["step"] == "masked_logprobs"
            want = mean_logprob(MaskedLogprobs.of(male["response"])) - mean_logprob(
                MaskedLogprobs.of(female["response"])
            )
        else:
            ctx = male["prompt"][: -len(CAUSAL[0].male)]
            want = (
                continuation_score(TokenLogprobs.of(male["response"]), len(ctx)).loglik
                - continuation_score(TokenLogprobs.of(female["response"]), len(ctx)).loglik
            )
            assert female["n_tokens"] == [1, 1]
        assert female["score"] == pytest.approx(want / math.log(10), rel=1e-12)
        # a second run comes from the response store
        again = run_tasks(
            ["gest-likelihood"],
            spec,
            limit=40,
            out=tmp_path / (spec[:6] + "2"),
            progress=False,
            options={"bootstrap_cycles": 0},
        )
        assert again.runs[0].counts.cache_hits == len(recs) and again.runs[0].counts.requests == 0
