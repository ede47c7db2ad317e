"""``word-lm:CHECKPOINT`` on a checkpoint trained for one epoch in the test: the model spec, prompt
tokenisation as in the LM's corpus, bordia's own samples for unprompted requests, seeded and
batch-independent prompted samples, greedy = argmax, top-p, and caching through the runner's store."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from genderscope.backends.word_lm import (  # noqa: E402
    WordLMBackend,
    WordLMOptions,
    continue_batch,
    prompt_words,
    word_ids,
)
from genderscope.core.primitives import GENERATE, response_problem  # noqa: E402
from genderscope.core.requests import Attempt, Job  # noqa: E402
from genderscope.core.request_value import Request  # noqa: E402

LINES = [
    "the man said he would buy the company",
    "the woman said she would sell her shares",
    "his wife and her husband own the <unk> business",
    "the company said its chairman would retire",
] * 6


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    from genderscope.bordia.lm.config import preset_config
    from genderscope.bordia.lm.train import train_lm

    d = tmp_path_factory.mktemp("wordlm")
    for name in ("train.txt", "valid.txt"):
        (d / name).write_text("\n".join(LINES) + "\n")
    cfg = preset_config("tiny", train=str(d / "train.txt"), valid=str(d / "valid.txt"), epochs=1)
    train_lm(cfg, d / "run")
    return d / "run"


def _backend(target: Path, **opts) -> WordLMBackend:
    return WordLMBackend(str(target), WordLMOptions(**opts))


def _gen(be, payloads: list[dict]) -> list[dict]:
    got: dict[int, object] = {}
    jobs = [Job(i, Request(GENERATE, p), 1, f"i{i}") for i, p in enumerate(payloads)]

    def emit(job, out) -> None:
        assert out.ok, out.error
        assert response_problem(GENERATE, out.response) is None
        got[job.index] = out.response

    be.answer(jobs, emit)
    return [got[i] for i in range(len(jobs))]


def _p(prompt: str = "", n: int = 10, seed: int = 500, **kw) -> dict:
    return {"prompt": prompt, "max_tokens": n, "seed": seed, **kw}


def test_prompt_tokenisation_matches_the_corpus() -> None:
    assert prompt_words("The man said\nshe  left\n") == [
        "The",
        "man",
        "said",
        "<eos>",
        "she",
        "left",
        "<eos>",
    ]
    index = {"the": 0, "man": 1, "<unk>": 2, "<eos>": 3}
    assert word_ids(["The", "man", "zebra", "<eos>"], index) == ([0, 1, 2, 3], 1, 0)
    assert word_ids(["The", "zebra"], {"the": 0}) == ([0], 0, 1)  # no <unk>: dropped, counted


def test_model_spec_and_fingerprint(run_dir: Path) -> None:
    from genderscope.data.pins import sha256_file
    from genderscope.core.lookup import backend_class

    assert backend_class(f"word-lm:{run_dir}") is WordLMBackend
    sha = sha256_file(run_dir / "best.pt")
    assert _backend(run_dir).fingerprint == _backend(run_dir / "best.pt").fingerprint == f"word-lm:{sha}"
    assert _gen(_backend(run_dir / "best.pt"), [_p()]) == _gen(_backend(run_dir), [_p()])
    with pytest.raises(Exception, match="no such run directory"):
        WordLMBackend(str(run_dir / "missing"), WordLMOptions())
    with pytest.raises(Exception, match="best.pt"):
        _gen(_backend(run_dir / "last.pt"), [_p()])


def test_unprompted_samples_are_bordias_samples(run_dir: Path) -> None:
    from genderscope.bordia.lm.generate import sample_batch
    from genderscope.bordia.lm.checkpoint import load_checkpoint

    ck = load_checkpoint(run_dir)
    seeds = [500, 501, 502]
    ref = sample_batch(ck.model, seeds, 15, 1.0)
    got = _gen(_backend(run_dir), [_p(n=15, seed=s) for s in seeds])
    assert [g["text"] for g in got] == [" ".join(ck.vocab[i] for i in row) for row in ref]
    assert all(g["n_tokens"] == 15 and g["finish_reason"] == "length" for g in got)
    # the prompted loop agrees with bordia's sampler when started the same way
    assert continue_batch(ck.model, [[], [], []], seeds, 15, [1.0] * 3, [1.0] * 3) == ref
    assert len({g["text"] for g in got}) == 3


def test_prompted_samples_are_seeded_and_batch_independent(run_dir: Path) -> None:
    payloads = [
        _p(prompt=t, n=12, seed=s) for t in ("the man said", "The woman said", "her husband") for s in (1, 2)
    ]
    one = _gen(_backend(run_dir, word_batch_size=1), payloads)
    many = _gen(_backend(run_dir, word_batch_size=8), payloads[::-1])[::-1]
    assert one == many
    nucleus = [dict(p, top_p=0.8) if i % 3 == 0 else p for i, p in enumerate(payloads)]  # mixed batch
    mixed = _gen(_backend(run_dir, word_batch_size=8), nucleus)
    assert [m for i, m in enumerate(mixed) if i % 3] == [o for i, o in enumerate(one) if i % 3]
    assert mixed == _gen(_backend(run_dir, word_batch_size=1), nucleus)
    assert one[0] != one[1]  # another seed, another sample
    # unbatched reference: run the prompt, then inverse-CDF sampling with the seed's uniforms u_1 … u_n
    from genderscope.bordia.lm.generate import sample_uniforms
    from genderscope.bordia.lm.checkpoint import load_checkpoint

    ck = load_checkpoint(run_dir)
    index = {w: i for i, w in enumerate(ck.vocab)}
    for k, (prompt, seed) in enumerate([("the man said", 1), ("the woman said", 2), ("her husband", 1)]):
        u, hidden = sample_uniforms(seed, 12), ck.model.init_hidden(1)
        tokens, words = torch.tensor([index[w] for w in prompt.split()]).view(-1, 1), []
        with torch.no_grad():
            for t in range(1, 13):
                step = ck.model(tokens, hidden)
                hidden = step.hidden
                cdf = torch.cumsum(torch.softmax(step.logits[-1, 0].double(), -1), -1)
                words.append(min(int((cdf <= u[t] * cdf[-1]).sum()), len(ck.vocab) - 1))
                tokens = torch.tensor([[words[-1]]])
        assert one[[0, 3, 4][k]]["text"] == " ".join(ck.vocab[i] for i in words)


def test_greedy_is_the_argmax_continuation_and_tiny_top_p_is_greedy(run_dir: Path) -> None:
    from genderscope.bordia.lm.checkpoint import load_checkpoint

    ck = load_checkpoint(run_dir)
    index = {w: i for i, w in enumerate(ck.vocab)}
    ids = [index[w] for w in "the man said".split()]
    hidden = ck.model.init_hidden(1)
    expect, tokens = [], torch.tensor(ids).view(-1, 1)
    with torch.no_grad():
        for _ in range(6):
            step = ck.model(tokens, hidden)
            hidden = step.hidden
            expect.append(int(step.logits[-1, 0].argmax()))
            tokens = torch.tensor([[expect[-1]]])
    be = _backend(run_dir)
    greedy, nucleus = _gen(
        be, [_p("the man said", 6, temperature=0), _p("the man said", 6, seed=9, top_p=1e-9)]
    )
    assert greedy["text"] == " ".join(ck.vocab[i] for i in expect) == nucleus["text"]


def test_generate_through_the_runner_is_cached(run_dir: Path, tmp_path: Path) -> None:
    from genderscope.core.runner import execute
    from genderscope.core.store import ResponseStore

    store = ResponseStore(tmp_path / "store.sqlite")
    attempts = [Attempt(f"p{i}", 1, Request(GENERATE, _p("the company said", 8, seed=i))) for i in range(4)]
    first = execute(attempts, _backend(run_dir), store)
    assert first.counts.requests == 4 and first.counts.errors == 0
    again = execute(attempts, _backend(run_dir), store)
    assert again.counts.cache_hits == 4 and again.counts.requests == 0
    assert [r.response for r in again.results] == [r.response for r in first.results]
