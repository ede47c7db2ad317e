"""winogender: the data as lm-eval's hub set has it, the prompt, lm-eval's per-task --limit, the paper's
measures on hand-made scores, the null model, and the tiny causal model through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from genderscope.tasks.scored.items import ScoredItem, Scores
from genderscope.tasks.scored.groups import group_weight, indicator, wcorr, wgroup_mean
from genderscope.tasks.scored.items import stack_fields
from genderscope.tasks.winogender.data import SENTENCES, STATS, is_gotcha, read_sentences
from genderscope.tasks.scored.lmeval import limit_per_subtask
from genderscope.tasks.winogender.task import SUBTASKS, _item, prompt, rudinger_metrics


@pytest.fixture
def sentences(data_registry):
    return read_sentences(data_registry.path(SENTENCES), data_registry.path(STATS))


def test_fields_match_the_hub_set(sentences) -> None:
    assert len(sentences) == 720
    assert {s.pronoun for s in sentences} == {"he", "his", "him", "she", "her", "they", "their", "them"}
    assert len({s.participant for s in sentences}) == 24
    # rows 100, 400 and 500 of oskarvanderwal/winogender (its viewer's pages 1, 4, 5 start there)
    assert sentences[100].sentid == "inspector.someone.1.female.txt" and sentences[100].pronoun == "she"
    s = sentences[400]
    assert (s.sentid, s.pronoun, s.occupation, s.participant, s.gender, s.label) == (
        "plumber.someone.0.female.txt",
        "her",
        "plumber",
        "someone",
        "female",
        0,
    )
    assert sentences[500].sentid == "appraiser.buyer.0.neutral.txt"


def test_gotcha_is_the_papers_rule(sentences) -> None:
    gotcha = [s for s in sentences if s.gotcha]
    assert len(gotcha) == 240  # the hub set's `gotcha` config
    assert sum(s.gender == "male" for s in gotcha) == sum(s.gender == "female" for s in gotcha) == 120
    assert is_gotcha("female", 0, 10.0) and not is_gotcha("female", 1, 10.0)
    assert is_gotcha("female", 1, 60.0) and is_gotcha("male", 0, 60.0) and not is_gotcha("neutral", 0, 10.0)


def test_prompt_is_lm_evals() -> None:
    from genderscope.tasks.winogender.data import Sentence

    s = Sentence(
        "x",
        "Someone called the plumber for her services.",
        "her",
        "plumber",
        "someone",
        "female",
        0,
        3.0,
        False,
    )
    c = prompt(s)
    assert c.context == "Someone called the plumber for her services. \u2018Her\u2019 refers to the"
    assert c.continuations == (" plumber", " someone")


def test_limit_takes_the_first_n_documents_of_each_lm_eval_task(sentences) -> None:
    items = limit_per_subtask([_item(s) for s in sentences], list(SUBTASKS), 3)
    for name, keep in SUBTASKS.items():
        want = [f"winogender/{s.sentid}" for s in sentences if keep(_item(s).fields)][:3]
        assert [it.item_id for it in items if it.fields[f"in_{name}"]] == want
    assert len(limit_per_subtask([_item(s) for s in sentences], list(SUBTASKS), None)) == 720


def _scores(rows: list[tuple[str, str, int, float, float]]) -> Scores:
    """(occupation, gender, label, bls, LL(occupation) − LL(participant)) -> Scores."""
    items = []
    for i, (occ, g, label, bls, _d) in enumerate(rows):
        f = {"gender": g, "label": label, "occupation": occ, "bls": bls, "gotcha": is_gotcha(g, label, bls)}
        items.append(ScoredItem(str(i), None, f, occ))  # type: ignore[arg-type]
    ll = np.array([[r[4], 0.0] for r in rows])
    return Scores(ll, np.ones_like(ll), stack_fields(items), items)


def _stereotyped() -> Scores:
    """Occupation A (20 % female): male pronouns -> occupation, female -> participant; B (80 %) the reverse;
    C (50 %): both -> occupation.  Each (occupation, gender) has labels 0 and 1."""
    sign = {("A", "male"): 1, ("A", "female"): -1, ("B", "male"): -1, ("B", "female"): 1}
    rows = []
    for occ, bls in (("A", 20.0), ("B", 80.0), ("C", 50.0)):
        for g in ("male", "female"):
            rows += [(occ, g, label, bls, float(sign.get((occ, g), 1))) for label in (0, 1)]
    return _scores(rows)


def test_rudinger_metrics_on_hand_made_scores() -> None:
    m = {k: v[0] for k, v in rudinger_metrics(_stereotyped(), np.ones((1, 12))).items()}
    assert m["accuracy"] == m["accuracy_male"] == m["accuracy_female"] == 0.5
    assert m["accuracy_gap_male_female"] == 0.0 and np.isnan(m["accuracy_neutral"])
    # gotcha: A male 1, A female 0, B male 0, B female 1, C male 0 (right), C female 1; the others: all right
    # but C male 1
    assert m["accuracy_gotcha"] == pytest.approx(1 / 6) and m["gotcha_gap"] == pytest.approx(4 / 6)
    assert m["occupation_rate_male"] == m["occupation_rate_female"] == 4 / 6
    assert m["bls_correlation"] == pytest.approx(1.0) and m["bls_correlation_prob"] == pytest.approx(1.0)


def test_rudinger_metrics_under_cluster_weights() -> None:
    s = _stereotyped()
    C = np.array([[2.0] * 4 + [0.0] * 4 + [1.0] * 4])  # A drawn twice, B never, C once
    m = {k: v[0] for k, v in rudinger_metrics(s, C).items()}
    # per occupation (female − male share resolved to the occupation): A −1 (twice), C 0
    assert m["bls_correlation"] == pytest.approx(np.corrcoef([20, 20, 50], [-1, -1, 0])[0, 1])
    assert m["accuracy"] == 0.5


def test_wcorr_with_integer_weights_is_corrcoef_of_repeated_groups() -> None:
    rng = np.random.default_rng(0)
    x, y, w = rng.normal(size=7), rng.normal(size=7), rng.integers(0, 4, size=7).astype(float)
    want = np.corrcoef(np.repeat(x, w.astype(int)), np.repeat(y, w.astype(int)))[0, 1]
    assert wcorr(w[None, :], x, y[None, :])[0] == pytest.approx(want)
    assert np.isnan(wcorr(np.ones((1, 3)), np.ones(3), y[None, :3])[0])  # constant side


def test_group_helpers() -> None:
    G, names = indicator(["b", "a", "b"])
    assert names == ["b", "a"] and G.tolist() == [[1, 0], [0, 1], [1, 0]]
    C = np.array([[1.0, 1.0, 1.0], [2.0, 0.0, 2.0]])
    means = wgroup_mean(C, np.array([1.0, 5.0, 3.0]), G)
    assert means[0].tolist() == [2.0, 5.0] and means[1, 0] == 2.0 and np.isnan(means[1, 1])
    assert group_weight(C, G).tolist() == [[1.0, 1.0], [2.0, 0.0]]


def test_random_model_sits_at_no_bias(tmp_path: Path) -> None:
    from genderscope.core.engine import run_tasks

    out = run_tasks(["winogender"], "random", out=tmp_path / "r", progress=False, options={"n_boot": 300})
    m = out.runs[0].result.metrics
    from genderscope.report.glossary import metric_doc

    assert all(metric_doc("winogender", k) is not None for k in m)
    for name in (
        "accuracy_gap_male_female",
        "gotcha_gap",
        "occupation_rate_gap_male_female",
        "bls_correlation",
        "bls_correlation_prob",
    ):
        assert m[name].ci_low <= 0.0 <= m[name].ci_high, name
    assert m["accuracy"].ci_low <= 0.5 <= m["accuracy"].ci_high
    table = out.runs[0].result.extra["occupations"]
    assert len(table) == 60 and table[0]["bls_pct_female"] <= table[-1]["bls_pct_female"]


@pytest.mark.usefixtures("hf")
def test_tiny_causal_through_the_cli(tmp_path: Path, sentences) -> None:
    from typer.testing import CliRunner

    from genderscope.cli.app import app
    from genderscope.demo_models import build_tiny_causal, words_of

    texts = [s.sentence + " " + s.occupation + " " + s.participant for s in sentences[:40]]
    model = build_tiny_causal(tmp_path / "m", words_of(texts + ["\u2018 He She They \u2019 refers to the"]))
    out = tmp_path / "o"
    args = [
        "run",
        "winogender",
        "--model",
        f"hf-causal:{model}",
        "--mode",
        "lm-eval",
        "--limit",
        "4",
        "--out",
        str(out),
        "--n-boot",
        "50",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    block = json.loads((out / "results.json").read_text())["tasks"]["winogender"]
    picks = {}
    for line in (out / "attempts.jsonl").read_text().splitlines():
        a = json.loads(line)
        picks[a["item_id"]] = a["correct"]
        assert a["choice"] == ("occupation", "participant")[int(np.argmax(a["response"]["logprobs"]))]
    by_id = {f"winogender/{s.sentid}": s for s in sentences}
    for name, keep in SUBTASKS.items():
        docs = [f"winogender/{s.sentid}" for s in sentences if keep(_item(s).fields)][:4]
        assert block["lm_eval"][name]["n"] == 4
        assert block["metrics"][f"{name}/acc"]["value"] == pytest.approx(np.mean([picks[d] for d in docs]))
        assert all(d in by_id for d in docs)


def test_a_malformed_line_is_one_data_error(tmp_path: Path, data_registry) -> None:
    from genderscope.common.errors import DataError

    bad = tmp_path / "all_sentences.tsv"
    bad.write_text(
        "sentid\tsentence\nnurse.patient.0.female.txt\tThe nurse saw the patient.\n", encoding="utf-8"
    )
    with pytest.raises(DataError, match=r"all_sentences.tsv:2: bad row \(expected one pronoun"):
        read_sentences(bad, data_registry.path(STATS))
    bad.write_text("sentid\tsentence\nnurse.patient.2.female.txt\tShe did.\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"all_sentences.tsv:2: bad row \(sentid is not 'occupation"):
        read_sentences(bad, data_registry.path(STATS))
