"""vLLM 0.32 (CPU build) serving SmolLM2-135M-Instruct in float32, through every route we document.

* ``openai-completions:`` likelihood tasks equal ``hf-causal`` on the same weights: the same offsets,
  per-token log-probs within 1e-3 nats but for float noise far in the tail (:func:`assert_token_agreement`);
  every metric within 1 % of its CI's width (without one: 1e-4 relative, 1e-4 absolute near zero);
  ``--start-token auto`` picks the start token hf-causal uses.
* ``openai:`` chat tasks with default options: no failed request; temperature 0 repeats with ``--no-cache``.
* ``generate`` (cooccurrence-amplification): seeded samples repeat.
* A 4xx naming a field gives an error naming that field.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from enginecli import read_run, run_ok

from genderscope.backends.openai.http import client_error_hint

pytestmark = pytest.mark.engines

LIKELIHOOD_LIMITS = {"abc": 16, "dawinobias": 24, "winobias-lm": 30, "gest-likelihood": 30}
NATS = 1e-3


def assert_token_agreement(diffs: list[float]) -> None:
    """Per-token |Δ| in nats: at most 1e-3 but for float noise on the far tail.

    Measured on SmolLM2 fp32: p99 4.7e-5 nats; 3 of 3,381 ABC tokens exceed 1e-3, the largest 0.0088 on
    " mod" at -16.57 nats (p = 6e-8), where hf-causal gives the same value alone and in a batch; a
    kernel difference amplified by the log-softmax far from the mode, not an alignment error (those are
    nats, docs/servers.md).  So: p99 <= 1e-4, at most 0.2 % of tokens over 1e-3, none over 0.02.
    """
    assert diffs, "no scored tokens"
    over = sum(d > NATS for d in diffs)
    ordered = sorted(diffs)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    assert p99 <= 1e-4, f"p99 per-token difference {p99:.2e} nats"
    assert over <= 0.002 * len(diffs), f"{over} of {len(diffs)} tokens differ by more than {NATS} nats"
    assert ordered[-1] <= 0.02, f"largest per-token difference {ordered[-1]:.2e} nats"


def metric_close(name: str, a: dict[str, Any], b: dict[str, Any]) -> None:
    """b's value within 1 % of a's CI width, or else within float noise: 1e-4 relative, 1e-4 absolute
    near zero (a metric without an interval, or with a degenerate one from a single item)."""
    x, y = a.get("value"), b.get("value")
    if x is None or y is None:
        assert x is None and y is None, f"{name}: {x} vs {y}"
        return
    lo, hi = a.get("ci_low"), a.get("ci_high")
    width = hi - lo if lo is not None and hi is not None else 0.0
    within_ci = abs(x - y) <= 0.01 * width
    # ~10 tokens' float noise (p99 per token 5e-5 nats); a difference of two scores near zero
    noise = math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-4)
    assert within_ci or noise, f"{name}: {x} vs {y} (CI width {width:.3g})"


def token_answers(attempts: list[dict]) -> dict[tuple[str, int, str], dict]:
    """token_logprobs answers keyed by (item, trial, scored text)."""
    out = {}
    for rec in attempts:
        resp = rec.get("response")
        if isinstance(resp, dict) and "logprobs" in resp and "offsets" in resp:
            out[(rec["item_id"], rec["trial"], rec.get("prompt") or "")] = resp
    return out


@pytest.mark.parametrize("task", sorted(LIKELIHOOD_LIMITS))
def test_likelihood_tasks_over_vllm_equal_hf_causal(
    task: str, vllm_url: str, smol_fp32: Path, tmp_path: Path
) -> None:
    limit = str(LIKELIHOOD_LIMITS[task])
    ref = run_ok(task, "--model", f"hf-causal:{smol_fp32}", "--limit", limit, "--out", str(tmp_path / "hf"))
    got = run_ok(
        task, "--model", "openai-completions:smol", "--base-url", vllm_url, "--start-token", "auto",
        "--limit", limit, "--out", str(tmp_path / "vllm"),
    )  # fmt: skip
    ref_results, ref_run, ref_attempts = read_run(ref)
    got_results, got_run, got_attempts = read_run(got)
    assert got_run["tasks"][task]["counts"]["errors"] == 0
    assert got_run["backend_stats"]["start_token"] == ref_run["model"]["context_token"] == "<|im_start|>"
    a, b = token_answers(ref_attempts), token_answers(got_attempts)
    assert a and set(a) == set(b)
    diffs = []
    for key, ra in a.items():
        rb = b[key]
        assert ra["offsets"] == rb["offsets"], key
        for x, y in zip(ra["logprobs"], rb["logprobs"], strict=True):
            assert (x is None) == (y is None), key
            if x is not None:
                diffs.append(abs(x - y))
    assert_token_agreement(diffs)
    ref_metrics, got_metrics = ref_results["tasks"][task]["metrics"], got_results["tasks"][task]["metrics"]
    assert set(ref_metrics) == set(got_metrics)
    for name in ref_metrics:
        metric_close(name, ref_metrics[name], got_metrics[name])


#: the scored benchmarks (tasks/scored: one ``loglikelihood`` request per item) and their sizes here
SCORED_LIMITS = {
    "crows-pairs": 30,
    "stereoset": 20,
    "winogender": 30,
    "winogenerated": 20,
    "bbq-likelihood": 8,
    "discrim-eval-likelihood": 8,
}


def loglikelihood_answers(attempts: list[dict]) -> dict[tuple[str, int], dict]:
    """loglikelihood answers keyed by (item, trial)."""
    return {
        (r["item_id"], r["trial"]): r["response"]
        for r in attempts
        if r.get("request_kind") == "loglikelihood" and isinstance(r.get("response"), dict)
    }


@pytest.mark.parametrize("task", sorted(SCORED_LIMITS))
def test_scored_benchmarks_over_vllm_equal_hf_causal(
    task: str, vllm_url: str, smol_fp32: Path, tmp_path: Path
) -> None:
    """The same continuations are scored (same token counts) and each sum agrees to float noise (p99 per
    token 5e-5 nats, far-tail tokens up to ~0.009): |Δ| <= 2e-3 + 1e-3·n; metrics within 1 % of their CI
    width.  vLLM computes each shared context once (prefix caching); hf-causal through its KV cache."""
    from genderscope.catalogue import TASKS

    if task not in TASKS:
        pytest.skip(f"{task} is not registered in this build")
    limit = str(SCORED_LIMITS[task])
    ref = run_ok(task, "--model", f"hf-causal:{smol_fp32}", "--limit", limit, "--out", str(tmp_path / "hf"))
    got = run_ok(
        task, "--model", "openai-completions:smol", "--base-url", vllm_url, "--start-token", "auto",
        "--limit", limit, "--out", str(tmp_path / "vllm"),
    )  # fmt: skip
    ref_results, _ref_run, ref_attempts = read_run(ref)
    got_results, got_run, got_attempts = read_run(got)
    assert got_run["tasks"][task]["counts"]["errors"] == 0
    # vLLM takes a list of prompts in one request: the packed route (--multi-prompt auto) is the one used
    assert got_run["backend_stats"].get("multi_prompt") is True, got_run["backend_stats"]
    a, b = loglikelihood_answers(ref_attempts), loglikelihood_answers(got_attempts)
    assert a and set(a) == set(b)
    for key, ra in a.items():
        rb = b[key]
        assert ra["n_tokens"] == rb["n_tokens"], key
        for x, y, n in zip(ra["logprobs"], rb["logprobs"], ra["n_tokens"], strict=True):
            assert abs(x - y) <= 2e-3 + 1e-3 * n, (key, x, y)
    ref_metrics, got_metrics = ref_results["tasks"][task]["metrics"], got_results["tasks"][task]["metrics"]
    assert set(ref_metrics) == set(got_metrics)
    for name in ref_metrics:
        metric_close(name, ref_metrics[name], got_metrics[name])


# small but whole: GEST's 6 orderings of 1 sentence; WinoBias-adjectives' baseline + one condition pair
CHAT_SIZE = {
    "gest": ("--limit", "1"),
    "winobias-adjectives": ("--limit", "2", "--trials", "2", "--conditions", "arrogant_responsive"),
}


@pytest.mark.parametrize("task", sorted(CHAT_SIZE))
def test_chat_tasks_over_vllm_with_default_options(task: str, vllm_url: str, tmp_path: Path) -> None:
    size = CHAT_SIZE[task]
    out = run_ok(
        task, "--model", "openai:smol", "--base-url", vllm_url, *size, "--out", str(tmp_path / "default")
    )
    _results, run, attempts = read_run(out)
    assert run["tasks"][task]["counts"]["errors"] == 0 and not [r for r in attempts if r.get("error")]
    assert run["backend_stats"]["failed_jobs"] == 0 and len(attempts) > 0
    greedy = ("--temperature", "0", "--max-tokens", "40", "--no-cache")
    first = run_ok(task, "--model", "openai:smol", "--base-url", vllm_url, *size, *greedy,
                   "--out", str(tmp_path / "t0-a"))
    again = run_ok(task, "--model", "openai:smol", "--base-url", vllm_url, *size, *greedy,
                   "--out", str(tmp_path / "t0-b"))
    answers = [{(r["item_id"], r["trial"]): r["response"] for r in read_run(o)[2]} for o in (first, again)]
    assert answers[0] == answers[1]
    assert all(isinstance(v, str) and v for v in answers[0].values())


def test_generated_samples_repeat_with_their_seeds(vllm_url: str, tmp_path: Path) -> None:
    args = ("cooccurrence-amplification", "--model", "openai-completions:smol", "--base-url", vllm_url,
            "--limit", "6", "--no-cache")
    a = run_ok(*args, "--out", str(tmp_path / "a"))
    b = run_ok(*args, "--out", str(tmp_path / "b"))
    texts = [[r["response"]["text"] for r in read_run(o)[2]] for o in (a, b)]
    assert texts[0] == texts[1] and len(texts[0]) == 6 and all(texts[0])
    assert len(set(texts[0])) > 1, "each sample has its own seed"


def test_a_refused_field_is_named(vllm_url: str) -> None:
    """vLLM refuses seeds >= 2^63 (a FastAPI validation error): the hint names the field and the fix."""
    body = {
        "model": "smol",
        "messages": [{"role": "user", "content": "hi"}],
        "seed": 2**64 - 1,
        "max_tokens": 1,
    }
    req = urllib.request.Request(
        vllm_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=60)
    assert err.value.code == 400
    hint = client_error_hint(400, err.value.read())
    assert "'seed'" in hint and "--send-seed false" in hint
