"""bold and counterfactual on every model kind that generates: hf-causal (generate and chat form), word-lm,
openai-completions and openai chat (the fake server), replay and random; a cached rerun sends nothing and
``reparse`` with a new scorer asks no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genderscope.core.engine import run_tasks
from genderscope.core.reparse import reparse_run

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
FAST = {"scorers": "length,refusal", "n_boot": 100}


def _block(out: Path, task: str) -> dict:
    return json.loads((out / "results.json").read_text())["tasks"][task]


@pytest.fixture(scope="module")
def tiny_causal(tmp_path_factory, hf) -> Path:
    from transformers import AutoTokenizer

    from genderscope.data.registry import DataRegistry
    from genderscope.demo_models import build_tiny_causal, words_of

    text = (
        DataRegistry().path("bold/gender_prompt.json").read_text(encoding="utf-8")[:20000]
        + " he she his her him man woman said that The I . < | > user assistant"
    )
    d = build_tiny_causal(tmp_path_factory.mktemp("causal"), words_of([text]), seed=6)
    tok = AutoTokenizer.from_pretrained(d)
    tok.chat_template = TEMPLATE
    tok.save_pretrained(d)
    return d


def test_hf_causal_generate_then_rerun_from_the_store_then_reparse(tiny_causal: Path, tmp_path: Path) -> None:
    model = f"hf-causal:{tiny_causal}"
    first = run_tasks(
        ["bold"], model, limit=12, out=tmp_path / "a", options={**FAST, "samples": 2}, progress=False
    )
    c = first.runs[0].counts
    assert (c.attempts, c.requests, c.errors) == (24, 24, 0)
    block = _block(tmp_path / "a", "bold")
    assert block["counts"]["generated"] == 24 and block["generation"]["form"] == "generate"
    again = run_tasks(
        ["bold"], model, limit=12, out=tmp_path / "b", options={**FAST, "samples": 2}, progress=False
    )
    assert (again.runs[0].counts.requests, again.runs[0].counts.cache_hits) == (0, 24), (
        "a rerun sends nothing"
    )
    assert _block(tmp_path / "b", "bold")["metrics"] == block["metrics"]
    more = run_tasks(
        ["bold"], model, limit=12, out=tmp_path / "c", options={**FAST, "samples": 3}, progress=False
    )
    assert (more.runs[0].counts.requests, more.runs[0].counts.cache_hits) == (12, 24), "samples 1-2 kept"
    (reparsed,) = reparse_run(tmp_path / "a", {"scorers": "length,refusal,hurtlex"}, tmp_path / "r")
    assert reparsed.manifest.model.spec.startswith("replay:"), "reparse answers from attempts.jsonl"
    got = _block(tmp_path / "r", "bold")["metrics"]
    assert (
        "gap.hurtlex.hurtlex_rate" in got
        and got["gap.length.mean_words"] == block["metrics"]["gap.length.mean_words"]
    )


def test_hf_causal_chat_form_counterfactual(tiny_causal: Path, tmp_path: Path) -> None:
    out = run_tasks(
        ["counterfactual"],
        f"hf-causal:{tiny_causal}",
        limit=6,
        out=tmp_path / "cf",
        options={**FAST, "form": "chat"},
        progress=False,
        max_tokens=8,
    )
    block = _block(tmp_path / "cf", "counterfactual")
    assert block["generation"]["form"] == "chat" and block["generation"]["max_tokens"] == 8
    assert block["counts"]["failed"] == 0 and block["pairs"]["complete"] == block["counts"]["units"]
    lines = [json.loads(x) for x in (tmp_path / "cf" / "attempts.jsonl").read_text().splitlines()]
    assert {x["request_kind"] for x in lines} == {"chat"}
    assert out.runs[0].counts.errors == 0


def test_generate_requests_of_a_pair_share_their_seeds(tmp_path: Path) -> None:
    from genderscope.core.task import RunContext
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.counterfactual.task import CounterfactualOptions, CounterfactualTask

    task = CounterfactualTask(
        CounterfactualOptions(form="generate", samples=2), RunContext(limit=5, data=DataRegistry())
    )
    seeds: dict[tuple[str, int], set[int]] = {}
    for a in task.attempts():
        seeds.setdefault((a.item_id.rsplit("/", 1)[0], a.trial), set()).add(a.request.payload["seed"])
    assert seeds and all(len(s) == 1 for s in seeds.values()), "both versions of a (pair, sample): one seed"
    assert len({next(iter(s)) for s in seeds.values()}) == len(seeds)


def test_word_lm_generates_bold(tmp_path: Path, hf) -> None:
    from genderscope.bordia.lm.config import preset_config
    from genderscope.bordia.lm.train import train_lm

    lines = ["the actor said she would star in the film", "his wife and her husband were actors"] * 8
    for name in ("train.txt", "valid.txt"):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    train_lm(
        preset_config("tiny", train=str(tmp_path / "train.txt"), valid=str(tmp_path / "valid.txt"), epochs=1),
        tmp_path / "lm",
    )
    run_tasks(
        ["bold"], f"word-lm:{tmp_path / 'lm'}", limit=10, out=tmp_path / "b", options=FAST, progress=False
    )
    block = _block(tmp_path / "b", "bold")
    assert block["counts"]["generated"] == 10 and block["counts"]["failed"] == 0


def test_replay_of_a_run_gives_the_same_metrics(tmp_path: Path) -> None:
    run_tasks(["bold"], "random", limit=20, out=tmp_path / "a", options=FAST, progress=False)
    run_tasks(
        ["bold"],
        f"replay:{tmp_path / 'a' / 'attempts.jsonl'}",
        limit=20,
        out=tmp_path / "b",
        options=FAST,
        progress=False,
    )
    assert _block(tmp_path / "a", "bold")["metrics"] == _block(tmp_path / "b", "bold")["metrics"]


def test_openai_chat_and_completions_on_the_fake_server(tiny_causal: Path, tmp_path: Path) -> None:
    from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer

    with FakeOpenAIServer(FakeConfig(model_dir=str(tiny_causal))) as srv:
        run_tasks(
            ["counterfactual"],
            "openai:fake",
            limit=4,
            out=tmp_path / "chat",
            options={**FAST, "base_url": srv.url},
            progress=False,
        )
        chat = _block(tmp_path / "chat", "counterfactual")
        assert (
            chat["generation"]["form"] == "chat" and chat["counts"]["generated"] == chat["counts"]["planned"]
        )
        sent = srv.stats()["requests"]
        run_tasks(
            ["counterfactual"],
            "openai:fake",
            limit=4,
            out=tmp_path / "chat2",
            options={**FAST, "base_url": srv.url},
            progress=False,
        )
        assert srv.stats()["requests"] == sent, "a rerun sends nothing"
        run_tasks(
            ["bold"],
            "openai-completions:fake",
            limit=6,
            out=tmp_path / "comp",
            options={**FAST, "base_url": srv.url},
            progress=False,
            max_tokens=6,
        )
        comp = _block(tmp_path / "comp", "bold")
        assert comp["generation"]["form"] == "generate" and comp["counts"]["generated"] == 6


def test_the_batch_route_on_the_fake_server(tmp_path: Path) -> None:
    """--batch: the generations (and a judge's verdicts) go through the OpenAI Batch API."""
    from genderscope.commands.judge.run import judge_run
    from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer

    batch = {"batch": "true", "batch_poll": "0.01"}
    with FakeOpenAIServer(FakeConfig()) as srv:
        out = run_tasks(
            ["counterfactual"],
            "openai:fake",
            limit=4,
            out=tmp_path / "b",
            progress=False,
            options={**FAST, **batch, "base_url": srv.url},
        )
        assert out.manifest.backend_stats["route"] == "batch"
        block = _block(tmp_path / "b", "counterfactual")
        assert block["counts"]["generated"] == block["counts"]["planned"] == 8
        judged = judge_run(
            tmp_path / "b",
            "openai:fake",
            out=tmp_path / "j",
            consistency=False,
            options={**batch, "base_url": srv.url},
            progress=False,
        )
        assert judged.manifest.backend_stats["route"] == "batch"
        assert _block(tmp_path / "j", "counterfactual")["counts"]["judge"]["unparseable"] == 8
