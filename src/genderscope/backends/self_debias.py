"""``self-debias:hf-causal:PATH`` — Self-Debias (Schick, Udupa & Schütze 2021) over a causal LM.

At every position the model's next-token distribution p(w | x_<t) is compared with its distribution after
a bias-inducing prefix, p_b(w) = max over prefixes of p(w | prefix, x_<t) (default: bias-bench's gender
prefix).  Tokens the prefix makes more likely are down-weighted: with Δ(w) = max(p_b(w) − p(w), 0),
α(w) = max(exp(−λ·Δ(w)), ε) and p̃(w) = α(w)·p(w) / Σ_v α(v)·p(v) (λ = ``--decay-constant``, 50; ε =
``--epsilon``, 0.01; the authors' ``SelfDebiasingLogitsProcessor``).  Scores are ln p̃ of the text's
tokens, so every likelihood task measures the self-debiased model:

* ``token_logprobs`` {text}: as ``hf-causal`` (after the start token), each token scored under p̃;
* ``loglikelihood`` {context, continuations}: lm-eval's encoding, Σ ln p̃ over each continuation's tokens.

The biased input is the scored sequence with the prefix's tokens after its leading start token (BOS or
EOS), or in front when it has none.

Generation (``chat``, ``generate``) is not offered: only the scoring kinds are self-debiased here.
Fingerprint: the wrapped model's plus λ, ε and the prefixes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from genderscope.backends.continuations import encode_pairs
from genderscope.backends.hf_base import HFBackendBase
from genderscope.backends.hf_causal import CausalOptions, HFCausalLMBackend
from genderscope.core.backend import Emit, handles
from genderscope.core.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import LOGLIKELIHOOD, TOKEN_LOGPROBS
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

    def debiased_logprobs(self, seq: list[int], scored_from: int) -> list[float]:
        """ln p̃(seq[t] | seq[:t]) for t = ``scored_from`` … len(seq) − 1 (see the module docstring)."""
        import torch

        o = self.options
        with torch.inference_mode():
            reg = torch.softmax(
                self.model(input_ids=torch.tensor([seq], device=self.device)).logits[0].float(), -1
            )
            p = reg[scored_from - 1 : len(seq) - 1]
            p_b = None
            for pre in self.prefixes:
                # the prefix goes after a leading start token, else in front
                biased = seq[:1] + pre + seq[1:] if seq[0] == self.prefix_id else pre + seq
                shift = len(pre)
                logits = self.model(input_ids=torch.tensor([biased], device=self.device)).logits[0].float()
                q = torch.softmax(logits[shift + scored_from - 1 : shift + len(seq) - 1], -1)
                p_b = q if p_b is None else torch.maximum(p_b, q)
            self.count_forward(1 + len(self.prefixes))
            alpha = torch.clamp(torch.exp(-o.decay_constant * torch.clamp(p_b - p, min=0.0)), min=o.epsilon)
            pt = p * alpha
            pt = pt / pt.sum(-1, keepdim=True)
            tgt = torch.tensor(seq[scored_from:], device=pt.device)
            return torch.log(pt.gather(1, tgt[:, None])[:, 0]).double().cpu().tolist()

    @handles(TOKEN_LOGPROBS)
    def _token_logprobs_jobs(self, jobs: list[Job], emit: Emit) -> None:
        for job in jobs:
            text = job.request.payload["text"]
            ids, offsets = HFCausalLMBackend.encode(self, text)  # type: ignore[arg-type]
            if self.prefix_id is None or not ids:
                emit(
                    job,
                    Outcome(error="self-debias scores after a start token (BOS or EOS) and a non-empty text"),
                )
                continue
            lps = self.debiased_logprobs([self.prefix_id] + ids, 1)
            toks = self.tok.convert_ids_to_tokens(ids)
            emit(job, Outcome(response={"tokens": toks, "offsets": offsets, "logprobs": lps}))

    @handles(LOGLIKELIHOOD)
    def _loglikelihood_jobs(self, jobs: list[Job], emit: Emit) -> None:
        for job in jobs:
            p = job.request.payload
            try:
                ctx, conts = encode_pairs(self._encode, p["context"], p["continuations"], self.prefix_id)
            except ValueError as exc:
                emit(job, Outcome(error=str(exc)))
                continue
            sums = [float(sum(self.debiased_logprobs(ctx + c, len(ctx)))) for c in conts]
            emit(job, Outcome(response={"logprobs": sums, "n_tokens": [len(c) for c in conts], "greedy": []}))

    def _encode(self, text: str, special: bool) -> list[int]:
        from genderscope.backends.hf_loglikelihood import lm_eval_encode

        return lm_eval_encode(self, text, special)

    def describe(self) -> dict[str, Any]:
        o = self.options
        settings = {"decay_constant": o.decay_constant, "epsilon": o.epsilon, "prefixes": o.prefix.split("|")}
        return {**super().describe(), "self_debias": settings}
