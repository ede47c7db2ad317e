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
too, so the text's tokens are the same in both rows).  Sequences are batched as ``hf-causal`` batches them
(right-padded under ``--batch-tokens``, capped on CPU): one forward pass over the regular sequences, then one
per prefix over the copies' own tokens after the head they all share (start token + prefix), whose KV cache
is computed once per call.  Generation: the
prefixed prompt is the prefix text in front of the input text, tokenised together (the authors'
``generate_self_debiasing``): ``generate`` = start token + prefix + prompt, ``chat`` = the chat template
with the prefix in front of the first message's content (docs/decisions.md).
Fingerprint: the wrapped model's plus λ, ε and the prefixes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from genderscope.backends.hf import generate as hf_generate
from genderscope.backends.continuations import encode_pairs
from genderscope.backends.hf.base import HFBackendBase
from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend
from genderscope.backends.hf.models import kinds_without_untemplated_chat
from genderscope.backends.self_debias_decode import debias, generate_debiased
from genderscope.core.backend import Emit, handles
from genderscope.common.errors import UsageError
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
        if any(not part.strip() for part in options.prefix.split("|")):
            raise UsageError(
                f"--prefix {options.prefix!r}: each bias-inducing prefix (separated by '|') must be non-empty"
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
        return self.debiased_many([(seq, scored_from)])[0]

    def debiased_many(self, items: list[tuple[list[int], int]]) -> list[list[float]]:
        """:meth:`debiased_logprobs` of every (seq, scored_from), batched under the logits budget as
        ``hf-causal`` batches: one right-padded forward pass over the regular sequences, then one per prefix
        over their prefixed copies.  A prefixed copy shares its head (start token + prefix, or the prefix
        alone) with every other: the head's KV cache and last logits are computed once per call, and only
        the copies' own tokens run, after the cached head."""
        import torch

        o = self.options
        out: list[list[float]] = [[] for _ in items]
        todo = [i for i, (seq, frm) in enumerate(items) if frm < len(seq)]
        heads: dict[tuple[int, bool], tuple[Any, Any]] = {}

        def run(batch: list[int]) -> None:
            seqs = [items[i][0] for i in batch]
            ids, mask = self.pad(seqs)
            self.count_forward(len(seqs))
            logits = self.model(input_ids=ids, attention_mask=mask).logits
            p = [torch.softmax(logits[b, frm - 1 : len(seq) - 1].float(), -1) for b, (seq, frm) in
                 enumerate(items[i] for i in batch)]  # fmt: skip
            p_b: list[Any] = [None] * len(batch)
            for k in range(len(self.prefixes)):
                for led in (True, False):  # sequences that start with the start token, and the others
                    part = [b for b, seq in enumerate(seqs) if (seq[0] == self.prefix_id) == led]
                    if part:
                        self._prefixed_probs(k, led, [items[batch[b]] for b in part], heads, p_b, part)
            for b, i in enumerate(batch):
                pt = debias(p[b], p_b[b], o.decay_constant, o.epsilon)
                seq, frm = items[i]
                tgt = torch.tensor(seq[frm:], device=pt.device)
                out[i] = torch.log(pt.gather(1, tgt[:, None])[:, 0]).double().cpu().tolist()

        self.batched([len(items[i][0]) for i in todo], lambda bt: run([todo[j] for j in bt]),
                     self.full_logits_budget())  # fmt: skip
        return out

    def _prefixed_probs(
        self,
        k: int,
        led: bool,
        rows: list[tuple[list[int], int]],
        heads: dict[tuple[int, bool], tuple[Any, Any]],
        p_b: list[Any],
        slots: list[int],
    ) -> None:
        """Next-token distributions of prefix ``k``'s copies of ``rows`` (all led by the start token, or
        none), at the positions that predict seq[frm:]; folded into ``p_b[slots[r]]`` by maximum."""
        import copy

        import torch

        from genderscope.backends.hf.tensors import cache_keyword, repeat_cache_rows, returned_cache

        s = 1 if led else 0
        head = ([self.prefix_id] if led else []) + self.prefixes[k]
        if (k, led) not in heads:
            hout = self.model(input_ids=torch.tensor([head], device=self.device), use_cache=True)
            self.count_forward(1)
            heads[(k, led)] = (returned_cache(hout), hout.logits[0, -1:].float())
        cache, last = heads[(k, led)]
        ids, mask = self.pad([seq[s:] for seq, _ in rows])
        n_rows, width, h = ids.shape[0], ids.shape[1], len(head)
        past = repeat_cache_rows(copy.deepcopy(cache), n_rows)
        attn = torch.cat([torch.ones((n_rows, h), dtype=mask.dtype, device=mask.device), mask], dim=1)
        pos = torch.arange(h, h + width, device=ids.device)[None].expand(n_rows, -1)
        kw = {cache_keyword(self.model): past}
        logits = self.model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True, **kw).logits
        self.count_forward(n_rows)
        for r, (seq, frm) in enumerate(rows):
            # seq[t] is predicted by the head's last position (t = s), else by tail position t - s - 1
            q = torch.cat([last, logits[r, : len(seq) - s - 1].float()])[frm - s :]
            q = torch.softmax(q, -1)
            b = slots[r]
            p_b[b] = q if p_b[b] is None else torch.maximum(p_b[b], q)

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

    @classmethod
    def kinds_for(cls, target: str) -> frozenset[str]:
        """Every declared kind, less ``chat`` when the wrapped model (``hf-causal:PATH``) has no chat
        template."""
        return kinds_without_untemplated_chat(cls.request_kinds, target.removeprefix("hf-causal:"))

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
        from genderscope.backends.hf.loglikelihood import lm_eval_encode

        return lm_eval_encode(self, text, special)

    def describe(self) -> dict[str, Any]:
        o = self.options
        settings = {"decay_constant": o.decay_constant, "epsilon": o.epsilon, "prefixes": o.prefix.split("|")}
        return {**super().describe(), "self_debias": settings}
