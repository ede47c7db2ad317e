"""gest-likelihood on the tiny masked and causal test models: the backend kinds against a direct,
unbatched computation, and the task end to end through the engine."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from genderscope.core.engine import run_tasks  # noqa: E402
from genderscope.core.requests import CONTINUATION_LOGPROBS, MASKED_PAIR_LOGPROB, Job, Request  # noqa: E402
from genderscope.tasks.gest_likelihood.templates import CAUSAL, MASKED  # noqa: E402
from genderscope.testing.tiny_models import build_tiny_causal, build_tiny_mlm, words_of  # noqa: E402

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
    from genderscope import registry
    from genderscope.core.options import build_options

    cls = registry.backend_class(f"{kind}:{path}")
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


def test_masked_pair_logprob_matches_direct(tiny_mlm) -> None:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    be = _backend("hf-mlm", tiny_mlm, batch_tokens=64)  # small budget: several batches, padding
    payloads = [
        {"text_a": a, "text_b": b} for s in SENTENCES for a, b in (t.render(s) for t in MASKED.values())
    ]
    got = _answer(be, MASKED_PAIR_LOGPROB, payloads)
    model = AutoModelForMaskedLM.from_pretrained(tiny_mlm).eval()
    tok = AutoTokenizer.from_pretrained(tiny_mlm)
    for p, g in zip(payloads, got):
        want = _direct_masked(model, tok, p["text_a"], p["text_b"])
        assert g[0] == pytest.approx(want[0], abs=1e-4) and g[1] == pytest.approx(want[1], abs=1e-4)
    # identical texts: no differing position -> nulls
    assert _answer(be, MASKED_PAIR_LOGPROB, [{"text_a": "I overreacted.", "text_b": "I overreacted."}]) == [
        [None, None]
    ]


def test_continuation_logprobs_matches_direct(tiny_causal) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    be = _backend("hf-causal", tiny_causal, batch_tokens=40)
    payloads = [
        {"context": t.render(s), "continuations": [t.male, t.female]}
        for s in SENTENCES
        for t in CAUSAL.values()
    ]
    payloads.append({"context": '"I overreacted.",', "continuations": [" he said", " she"]})  # 2 tokens
    got = _answer(be, CONTINUATION_LOGPROBS, payloads)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal).eval()
    tok = AutoTokenizer.from_pretrained(tiny_causal)
    for p, g in zip(payloads, got):
        ctx = tok(p["context"])["input_ids"]
        for j, cont in enumerate(p["continuations"]):
            cids = tok(cont, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([ctx + cids])).logits[0]
            lp = torch.log_softmax(logits.double(), -1)
            want = sum(float(lp[len(ctx) - 1 + k, c]) for k, c in enumerate(cids))
            assert g["logprobs"][j] == pytest.approx(want, abs=1e-4)
            assert g["n_tokens"][j] == len(cids)
    assert got[-1]["n_tokens"] == [2, 1]


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
        assert len(recs) == 40 * n_templates
        scores = [r["score"] for r in recs]
        assert sum(s is not None and math.isfinite(s) for s in scores) == len(recs)
        assert res["metrics"]["g_s_mean"]["value"] is not None
        # the per-sentence score is the response turned into a log10 difference
        r0 = recs[0]
        if spec.startswith("hf-mlm"):
            assert r0["score"] == pytest.approx((r0["response"][0] - r0["response"][1]) / math.log(10))
        else:
            lp = r0["response"]["logprobs"]
            assert r0["score"] == pytest.approx((lp[0] - lp[1]) / math.log(10))
            assert r0["n_tokens"] == [1, 1]
        # a second run comes from the response store
        again = run_tasks(
            ["gest-likelihood"],
            spec,
            limit=40,
            out=tmp_path / (spec[:6] + "2"),
            progress=False,
            options={"bootstrap_cycles": 0},
        )
        assert again.runs[0].counts.cache_hits == 40 * n_templates
