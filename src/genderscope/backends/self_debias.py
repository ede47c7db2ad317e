"""``self-debias:hf-causal:PATH`` — Self-Debias (Schick, Udupa & Schütze 2021) over a causal LM.

At every position the model's next-token distribution p(w | x_<t) is compared with its distribution after
a bias-inducing prefix, p_b(w) = max over prefixes of p(w | prefix, x_<t) (default: bias-bench's gender
prefix).  Tokens the prefix makes more likely are down-weighted: with Δ(w) = max(p_b(w) − p(w), 0),
α(w) = max(exp(−λ·Δ(w)), ε) and p̃(w) = α(w)·p(w) / Σ_v α(v)·p(v) (λ = ``--decay-constant``, 50; ε =
``--epsilon``, 0.01; the authors' ``SelfDebiasingLogitsProcessor``).  Every task measures p̃:

* ``token_logprobs`` {text}: as ``hf-causal`` (after the start token), each token scored under p̃;
* ``loglikelihood`` {context, continuations}: lm-eval's encoding, Σ ln p̃ over each continuation's tokens;
* ``chat`` and ``generate``: as ``hf-causal`` (chat template, ``max_tokens``, greedy at temperature 0,
  else the answer's seeded nucleus sample, EOS stops, ``--gen-batch-size`` prompts at a time), each token
  drawn from p̃ (temperature and top-p applied to ln p̃, as transformers' warpers follow the authors'
  processor); see :mod:`~genderscope.backends.self_debias_decode`.

Scoring: the biased input is the scored sequence with the prefix's tokens after its leading start token
(BOS or EOS), or in front when it has none (the authors' ``compute_loss_self_debiasing`` joins token ids
too, so the text's tokens are the same in both rows); several sequences and their prefixed copies share a
right-padded forward pass under the logits budget (``--batch-tokens``, capped on CPU).  Generation: the
prefixed prompt is the prefix text in front of the input text, tokenised together (the authors'
``generate_self_debiasing``): ``generate`` = start token + prefix + prompt, ``chat`` = the chat template
with the prefix in front of the first message's content (docs/decisions.md).
Fingerprint: the wrapped model's plus λ, ε and the prefixes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from genderscope.backends import hf_generate
from genderscope.backends.continuations import encode_pairs
from genderscope.backends.hf_base import HFBackendBase
from genderscope.backends.hf_causal import CausalOptions, HFCausalLMBackend
from genderscope.backends.self_debias_decode import debias, generate_debiased
from genderscope.core.backend import Emit, handles
from genderscope.core.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import CHAT, GENERATE, LOGLIKELIHOOD, TOKEN_LOGPROBS
from genderscope.core.requests import Job, Outcome

#: bias-bench's Self-Debias prefix for gender (``bias_bench/debias/self_debias``)
GENDER_PREFIX = "The following text discriminates against people because of their gender: "


@dataclass
class SelfDebiasOptions(CausalOptions):
    decay_constant: float = opt(50.0, "Self-Debias λ: α = exp(−λ·max(p_prefix − p, 0))")
    epsilon: float = opt(0.01, "Self-Debias ε: the smallest factor α a token's probability is multiplied by")
    prefix: str = opt(GENDER_PREFIX, "bias-inducing prefix(es), separated by '|'")


class SelfDebiasBackend(HFBackendBase):
    kind = "self-debias"
    description = "Self-Debias (Schick et al. 2021) over a causal LM: self-debias:hf-causal:PATH"
    Options = SelfDebiasOptions
    auto_class = "AutoModelForCausalLM"

    def __init__(self, target: str, options: SelfDebiasOptions):
        inner, _, path = target.partition(":")
        if inner != "hf-causal" or not path:
            raise UsageError(
                f"self-debias:{target}: Self-Debias wraps a causal LM given as self-debias:hf-causal:PATH "
                "(it needs the model's full next-token distributions: masked LMs and API models cannot)"
            )
        super().__init__(path, options)
        digest = hashlib.sha256(options.prefix.encode()).hexdigest()[:12]
        self._fp += f"|self-debias:lambda={options.decay_constant}:eps={options.epsilon}:prefix={digest}"

    def after_load(self) -> None:
        t = self.tok
        self.prefix_id = t.bos_token_id if t.bos_token_id is not None else t.eos_token_id
        self.prefixes = [t(p, add_special_tokens=False)["input_ids"] for p in self.options.prefix.split("|")]

    def biased(self, seq: list[int], prefix: list[int]) -> list[int]:
        """``seq`` with the prefix's tokens after its leading start token, else in front."""
        return seq[:1] + prefix + seq[1:] if seq[0] == self.prefix_id else prefix + seq

    def debiased_logprobs(self, seq: list[int], scored_from: int) -> list[float]:
        """ln p̃(seq[t] | seq[:t]) for t = ``scored_from`` … len(seq) − 1 (see the module docstring)."""
        return self.debiased_many([(seq, scored_from)])[0]

    def debiased_many(self, items: list[tuple[list[int], int]]) -> list[list[float]]:
        """:meth:`debiased_logprobs` of every (seq, scored_from), batched: a sequence and its prefixed copies
        are rows of one forward pass, right-padded with several sequences under the logits budget."""
        import torch

        o, g = self.options, 1 + len(self.prefixes)
        units = [[seq] + [self.biased(seq, pre) for pre in self.prefixes] for seq, _ in items]
        out: list[list[float]] = [[] for _ in items]

        def run(batch: list[int]) -> None:
            rows = [r for i in batch for r in units[i]]
            ids, mask = self.pad(rows)
            self.count_forward(len(rows))
            logits = self.model(input_ids=ids, attention_mask=mask).logits
            for b, i in enumerate(batch):
                seq, frm = items[i]
                n, base = len(seq), b * g
                p = torch.softmax(logits[base, frm - 1 : n - 1].float(), -1)
                p_b = None
                for k, pre in enumerate(self.prefixes):
                    shift = len(pre)
                    q = torch.softmax(logits[base + 1 + k, shift + frm - 1 : shift + n - 1].float(), -1)
                    p_b = q if p_b is None else torch.maximum(p_b, q)
                pt = debias(p, p_b, o.decay_constant, o.epsilon)
                tgt = torch.tensor(seq[frm:], device=pt.device)
                out[i] = torch.log(pt.gather(1, tgt[:, None])[:, 0]).double().cpu().tolist()

        widths = [g * max(len(r) for r in u) for u in units]
        self.batched(widths, run, self.full_logits_budget())
        return out

    @handles(TOKEN_LOGPROBS)
    def _token_logprobs_jobs(self, jobs: list[Job], emit: Emit) -> None:
        uniq = list(dict.fromkeys(j.request.payload["text"] for j in jobs))
        enc = {t: HFCausalLMBackend.encode(self, t) for t in uniq}  # type: ignore[arg-type]
        ok = [t for t in uniq if self.prefix_id is not None and enc[t][0]]
        lps = dict(zip(ok, self.debiased_many([([self.prefix_id] + enc[t][0], 1) for t in ok])))
        for job in jobs:
            text = job.request.payload["text"]
            if text not in lps:
                emit(
                    job,
                    Outcome(error="self-debias scores after a start token (BOS or EOS) and a non-empty text"),
                )
                continue
            ids, offsets = enc[text]
            toks = self.tok.convert_ids_to_tokens(ids)
            emit(job, Outcome(response={"tokens": toks, "offsets": offsets, "logprobs": lps[text]}))

    @handles(LOGLIKELIHOOD)
    def _loglikelihood_jobs(self, jobs: list[Job], emit: Emit) -> None:
        todo: list[tuple[Job, list[list[int]]]] = []
        items: list[tuple[list[int], int]] = []
        for job in jobs:
            p = job.request.payload
            try:
                ctx, conts = encode_pairs(self._encode, p["context"], p["continuations"], self.prefix_id)
            except ValueError as exc:
                emit(job, Outcome(error=str(exc)))
                continue
            todo.append((job, conts))
            items.extend((ctx + c, len(ctx)) for c in conts)
        scores = iter(self.debiased_many(items))
        for job, conts in todo:
            sums = [float(sum(next(scores))) for _ in conts]
            emit(job, Outcome(response={"logprobs": sums, "n_tokens": [len(c) for c in conts], "greedy": []}))

    @handles(CHAT)
    def _chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
        hf_generate.chat(self, jobs, emit)

    @handles(GENERATE)
    def _generate_jobs(self, jobs: list[Job], emit: Emit) -> None:
        hf_generate.generate(self, jobs, emit)

    def prefixed_prompts(self, job: Job) -> list[list[int]]:
        """The prompt's prefixed copies, one per prefix, as the authors build them: the prefix text in front
        of the input text, tokenised together.  ``generate``: the start token, then prefix + prompt;
        ``chat``: the chat template with the prefix in front of the first message's content."""
        p, out = job.request.payload, []
        for text in self.options.prefix.split("|"):
            if job.request.kind == CHAT:
                msgs = [dict(m) for m in p["messages"]]
                if msgs:
                    msgs[0]["content"] = text + str(msgs[0].get("content") or "")
                out.append(hf_generate.prompt_ids(self.tok, msgs))
            else:
                start = [self.prefix_id] if self.prefix_id is not None else []
                out.append(start + list(self.tok(text + p["prompt"], add_special_tokens=False)["input_ids"]))
        return out

    def generate_chunk(self, chunk: list[tuple[Any, ...]], max_new: int) -> list[list[int]]:
        """New token ids for ``hf_generate``'s items ``(job, ids, max_new, temp, top_p, seed)``: Self-Debias
        decoding of each prompt beside its prefixed copies."""
        groups = [[it[1]] + self.prefixed_prompts(it[0]) for it in chunk]
        temps, top_ps, seeds = ([it[k] for it in chunk] for k in (3, 4, 5))
        return generate_debiased(self, groups, max_new, temps, top_ps, seeds)

    def _encode(self, text: str, special: bool) -> list[int]:
        from genderscope.backends.hf_loglikelihood import lm_eval_encode

        return lm_eval_encode(self, text, special)

    def describe(self) -> dict[str, Any]:
        o = self.options
        settings = {"decay_constant": o.decay_constant, "epsilon": o.epsilon, "prefixes": o.prefix.split("|")}
        return {**super().describe(), "self_debias": settings}
