"""``word-lm:CHECKPOINT`` — the project's word-level LMs (AWD-LSTM of ``genderscope bordia train`` / sweep).

``CHECKPOINT`` is a training run directory (its ``best.pt``, as written by ``bordia train --out DIR`` and
by every λ of ``bordia sweep``) or a checkpoint file holding ``model``, ``vocab`` and ``config`` (a
``best.pt``; ``last.pt`` has no vocabulary).  Request kind: ``generate`` only.

* **Prompt tokens** are what the LM was trained on (:mod:`genderscope.bordia.lm.data`): ``str.split()``
  words of each line, a newline = ``<eos>``.  A word not in the vocabulary is looked up lower-cased,
  else becomes ``<unk>`` (PTB and WikiText-2 have one), else is dropped (counted in ``stats()``).
* **Sampling** (:mod:`genderscope.bordia.lm.generate`): the sample's seed draws ``max_tokens`` + 1
  float64 uniforms u_0 … u_n (``sample_uniforms``); word t is the smallest index whose cumulative
  probability under softmax(logits / T) exceeds u_t · (total mass): exact inverse-CDF sampling.  An
  empty prompt starts from word ⌊u_0·|V|⌋ (not written), exactly as ``bordia generate``: such requests
  with T ≥ 1e-3 and ``top_p`` = 1 are answered by bordia's own ``sample_batch``, so a sweep through
  this backend writes the same samples.  With a prompt, u_0 is unused and the prompt is run first.
  T = 0 is greedy (argmax); ``top_p`` < 1 keeps the smallest most-probable set with that mass.
* **Answer**: the ``max_tokens`` sampled words joined by single spaces (``<eos>`` kept as a word, as in
  bordia's sample files, so ``boundary=line`` scoring cuts there); ``finish_reason`` is always
  ``length`` (the LM has no stop token).
* **Batching**: requests with the same prompt length and ``max_tokens`` run together,
  ``--word-batch-size`` rows at a time (each row has its own uniforms, so a sample's words do not
  depend on the batch up to float rounding in batched matrix products).  One CPU thread by default:
  the LSTM is small, and on a busy machine two threads made 200 samples × 50 words 13× slower.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Sequence

from genderscope.core.backend import Backend, Emit, handles
from genderscope.common.errors import DataError
from genderscope.core.options import opt
from genderscope.core.primitives import GENERATE
from genderscope.core.requests import Job, Outcome

EOS = "<eos>"
UNK = "<unk>"
#: bordia's sampler rejects lower temperatures (softmax overflow); below it we take the argmax
MIN_SAMPLING_TEMPERATURE = 1e-3


@dataclass
class WordLMOptions:
    device: str = opt("cpu", "torch device of the word-level LM (cpu, cuda, cuda:1, ...)")
    word_batch_size: int = opt(
        100, "word-lm: samples generated together (one batched step per word)", minimum=1, maximum=10**6
    )
    threads: int = opt(
        1,
        "torch CPU threads (env GENDERSCOPE_TORCH_THREADS wins; 0 = torch's default)",
        minimum=0,
        maximum=4096,
    )


def load_word_lm(target: str, device: str = "cpu") -> Any:
    """The :class:`~genderscope.bordia.lm.checkpoint.Checkpoint` of a run directory or checkpoint file."""
    import torch

    from genderscope.bordia.lm.checkpoint import Checkpoint, build_model, load_checkpoint
    from genderscope.bordia.lm.config import TrainConfig
    from genderscope.data.pins import sha256_file

    path = Path(target)
    if path.is_dir():
        return load_checkpoint(path, device)
    if not path.is_file():
        raise DataError(f"word-lm:{target}: no such run directory or checkpoint file")
    ck = torch.load(path, map_location=device, weights_only=False)
    if not isinstance(ck, dict) or not {"model", "vocab", "config"} <= set(ck):
        raise DataError(f"{path}: not a word-LM checkpoint with model, vocab and config (use best.pt)")
    names = {f.name for f in fields(TrainConfig)}
    cfg = TrainConfig(**{k: v for k, v in ck["config"].items() if k in names})
    model = build_model(cfg, len(ck["vocab"])).to(device)
    model.load_state_dict(ck["model"])
    model.eval()
    return Checkpoint(model, list(ck["vocab"]), cfg, sha256_file(path))


def prompt_words(prompt: str) -> list[str]:
    """The words an LM trained by ``bordia train`` reads: ``str.split()`` per line, newline = ``<eos>``."""
    lines = prompt.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        out.extend(line.split())
        if i < len(lines) - 1:
            out.append(EOS)
    return out


def word_ids(words: Sequence[str], index: dict[str, int]) -> tuple[list[int], int, int]:
    """Vocabulary ids of ``words`` (exact, else lower-cased, else ``<unk>``, else dropped), with the
    number of words mapped to ``<unk>`` and the number dropped."""
    unk = index.get(UNK)
    ids: list[int] = []
    n_unk = n_drop = 0
    for w in words:
        i = index.get(w, index.get(w.lower()))
        if i is None:
            if unk is None:
                n_drop += 1
                continue
            i, n_unk = unk, n_unk + 1
        ids.append(i)
    return ids, n_unk, n_drop


def pick_words(logits: Any, u: Any, temps: Sequence[float], top_ps: Sequence[float]) -> Any:
    """Next word per row (B × V logits, B uniforms): argmax where T < 1e-3, else inverse-CDF sampling of
    softmax(logits / T) in float64 (restricted to the top-p nucleus when top_p < 1)."""
    import torch

    logits = logits.double().cpu()
    out = torch.argmax(logits, dim=-1)
    V = logits.shape[-1]
    for nucleus in (False, True):  # each row by its own rule, whatever the other rows of the batch
        rows = [
            r for r, t in enumerate(temps) if t >= MIN_SAMPLING_TEMPERATURE and (top_ps[r] < 1.0) == nucleus
        ]
        if not rows:
            continue
        sel = torch.tensor(rows)
        t = torch.tensor([temps[r] for r in rows], dtype=torch.float64)[:, None]
        probs = torch.softmax(logits[sel] / t, dim=-1)
        us = u[sel].double()[:, None]
        if not nucleus:  # bordia's rule: vocabulary order
            cdf = torch.cumsum(probs, dim=-1)
            out[sel] = torch.searchsorted(cdf, us * cdf[:, -1:], right=True).clamp_(max=V - 1)[:, 0]
            continue
        p_sorted, order = torch.sort(probs, dim=-1, descending=True)
        cdf = torch.cumsum(p_sorted, dim=-1)
        tp = torch.tensor([top_ps[r] for r in rows], dtype=torch.float64)[:, None]
        keep = (torch.searchsorted(cdf, tp) + 1).clamp_(min=1, max=V)  # words kept per row
        k = torch.minimum(torch.searchsorted(cdf, us * cdf.gather(1, keep - 1), right=True), keep - 1)
        out[sel] = order.gather(1, k)[:, 0]
    return out


def continue_batch(
    model: Any,
    prompts: list[list[int]],
    seeds: list[int],
    words: int,
    temps: Sequence[float],
    top_ps: Sequence[float],
) -> list[list[int]]:
    """``words`` new word ids per row after equal-length ``prompts`` (one batched step per word); empty
    prompts start from word ⌊u_0·|V|⌋ as in bordia's ``sample_batch``, else u_0 is unused."""
    import torch

    from genderscope.bordia.lm.generate import sample_uniforms

    device = model.encoder.weight.device
    u = torch.stack([sample_uniforms(s, words) for s in seeds], dim=0)  # B × (words + 1)
    if not prompts[0]:
        tokens = torch.clamp((u[:, 0] * model.ntoken).floor().long(), max=model.ntoken - 1).view(1, -1)
    else:
        tokens = torch.tensor(prompts, dtype=torch.long).t().contiguous()  # L × B
    tokens = tokens.to(device)
    out: list[list[int]] = [[] for _ in prompts]
    with torch.no_grad():
        hidden = model.init_hidden(len(prompts))
        for t in range(1, words + 1):
            step = model(tokens, hidden)
            hidden = step.hidden
            nxt = pick_words(step.logits[-1], u[:, t], temps, top_ps)
            for r, w in enumerate(nxt.tolist()):
                out[r].append(w)
            tokens = nxt.view(1, -1).to(device)
    return out


class WordLMBackend(Backend):
    kind = "word-lm"
    description = "a word-level AWD-LSTM of `genderscope bordia train`/sweep (word-lm:RUN_DIR or best.pt)"
    Options = WordLMOptions

    def __init__(self, target: str, options: WordLMOptions):
        super().__init__(target, options)
        path = Path(target)
        if not (path.is_dir() or path.is_file()):
            raise DataError(f"word-lm:{target}: no such run directory or checkpoint file")
        self._ck: Any = None
        self._sha: str | None = None
        self.counters = {"samples": 0, "words": 0, "prompt_unk": 0, "prompt_dropped": 0}

    def load(self) -> Any:
        if self._ck is None:
            from genderscope.bordia.lm.config import set_threads

            set_threads(self.options.threads or None)
            self._ck = load_word_lm(self.target, self.options.device)
            self._index = {w: i for i, w in enumerate(self._ck.vocab)}
        return self._ck

    @property
    def fingerprint(self) -> str:
        if self._sha is None:
            from genderscope.data.pins import sha256_file

            path = Path(self.target)
            self._sha = sha256_file(path / "best.pt" if path.is_dir() else path)
        return f"word-lm:{self._sha}"

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        ck = self.load()
        out.update({"vocab_size": len(ck.vocab), "lambda": ck.config.lam})
        return out

    def stats(self) -> dict[str, Any]:
        return dict(self.counters)

    @handles(GENERATE)
    def _generate_jobs(self, jobs: list[Job], emit: Emit) -> None:
        from genderscope.bordia.lm.generate import sample_batch

        ck = self.load()
        groups: dict[tuple[int, int, bool], list[tuple[Job, list[int], float, float]]] = {}
        for job in jobs:
            p = job.request.payload
            ids, n_unk, n_drop = word_ids(prompt_words(p["prompt"]), self._index)
            self.counters["prompt_unk"] += n_unk
            self.counters["prompt_dropped"] += n_drop
            temp, top_p = float(p.get("temperature", 1.0)), float(p.get("top_p", 1.0))
            bordia = not ids and temp >= MIN_SAMPLING_TEMPERATURE and top_p >= 1.0
            groups.setdefault((len(ids), int(p["max_tokens"]), bordia), []).append((job, ids, temp, top_p))
        size = max(1, int(self.options.word_batch_size))
        for (_n, words, bordia), items in groups.items():
            for start in range(0, len(items), size):
                chunk = items[start : start + size]
                seeds = [int(j.request.payload["seed"]) for j, *_ in chunk]
                if words == 0:
                    rows: list[list[int]] = [[] for _ in chunk]
                elif bordia:  # bordia's own sampler, one temperature per call
                    rows = [[] for _ in chunk]
                    for t in dict.fromkeys(c[2] for c in chunk):
                        sel = [r for r, c in enumerate(chunk) if c[2] == t]
                        for r, row in zip(sel, sample_batch(ck.model, [seeds[r] for r in sel], words, t)):
                            rows[r] = row
                else:
                    rows = continue_batch(
                        ck.model,
                        [c[1] for c in chunk],
                        seeds,
                        words,
                        [c[2] for c in chunk],
                        [c[3] for c in chunk],
                    )
                for (job, *_), row in zip(chunk, rows):
                    self.counters["samples"] += 1
                    self.counters["words"] += len(row)
                    text = " ".join(ck.vocab[i] for i in row)
                    emit(
                        job, Outcome(response={"text": text, "n_tokens": len(row), "finish_reason": "length"})
                    )

    def close(self) -> None:
        self._ck = None
