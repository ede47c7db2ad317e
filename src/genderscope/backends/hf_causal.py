"""``hf-causal:NAME_OR_PATH`` — causal (left-to-right) LMs through Hugging Face transformers.

``NAME_OR_PATH`` may be a directory, a hub name already in the local HF cache, a ``.gguf`` file,
or a directory with ``--gguf FILE``; GGUF files are converted once and cached under
``$GENDERSCOPE_HOME/models``.

Request kinds (see docs/architecture.md):

* ``loglik`` {text, per_token} -> {loglik, n_scored, n_tokens, first_token_unscored[, tokens,
  logprobs]}: LL(s) = Σ_{t=1..N} log p(x_t | x_0..x_{t-1}) in nats, x_0 = BOS (else EOS; with
  neither, the first token of s is the context and is not scored), no EOS appended.
* ``token_logprobs`` {text} -> the same with ``tokens`` and ``logprobs`` always present.
* ``candidates`` {left, right, candidates} -> {loglik: {w: LL}, n_scored: {w: N}} for the texts
  ``left + w + right``.
* ``tokenize`` {text, add_special_tokens} -> {tokens, continuation_prefix}.
* ``chat`` and ``continuation_logprobs``: see :mod:`~genderscope.backends.hf_generate` (chat template,
  greedy or seeded sampling, left-padded batches) and :mod:`~genderscope.backends.hf_likelihood`.

Sequences are length-sorted, right-padded with an attention mask and packed under
``--batch-tokens``; log-softmax in float32, sums in float64.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from genderscope.backends import hf_common as C
from genderscope.core.backend import Emit
from genderscope.backends import hf_generate, hf_likelihood
from genderscope.core.requests import CHAT, CONTINUATION_LOGPROBS, Job, Outcome

LOGLIK = "loglik"
TOKEN_LOGPROBS = "token_logprobs"
CANDIDATES = "candidates"
TOKENIZE = "tokenize"


@dataclass
class CausalOptions(C.HFOptions):
    batch_tokens: int = C.opt(2048, "token budget per forward pass: batch size x padded length")
    gen_batch_size: int = C.opt(16, "chat generation: prompts generated together (left-padded batch)")


class HFCausalLMBackend(C.HFBackendBase):
    kind = "hf-causal"
    description = "a causal LM (GPT-2, Llama, SmolLM, Gemma, ...; GGUF files too) from a local path"
    Options = CausalOptions
    request_kinds = frozenset({LOGLIK, TOKEN_LOGPROBS, CANDIDATES, TOKENIZE, CONTINUATION_LOGPROBS, CHAT})
    auto_class = "AutoModelForCausalLM"

    def handlers(self) -> dict[str, Callable[[list[Job], Emit], None]]:
        return {
            CHAT: lambda jobs, emit: hf_generate.chat(self, jobs, emit),
            CONTINUATION_LOGPROBS: lambda jobs, emit: hf_likelihood.continuation_logprobs(self, jobs, emit),
            LOGLIK: self._loglik,
            TOKEN_LOGPROBS: self._loglik,
            CANDIDATES: self._candidates,
            TOKENIZE: self.tokenize_jobs,
        }

    def after_load(self) -> None:
        t = self.tok
        self.prefix_id = t.bos_token_id if t.bos_token_id is not None else t.eos_token_id
        self.settings["context_token"] = t.bos_token if t.bos_token_id is not None else t.eos_token
        # no BOS and no EOS: the first token of every text is context only (spec §3.3)
        self.settings["first_token_unscored"] = self.prefix_id is None

    def loglik_many(self, texts: list[str]) -> list[dict[str, Any]]:
        """Log-likelihood and per-token log-probs of each distinct text, batched."""
        import numpy as np
        import torch

        uniq = list(dict.fromkeys(texts))
        seqs: list[list[int]] = []
        for t in uniq:
            ids = self.tok(t, add_special_tokens=False)["input_ids"]
            seqs.append(([self.prefix_id] if self.prefix_id is not None else []) + list(ids))
        scores: list[Any] = [None] * len(uniq)

        def run(batch: list[int]) -> None:
            rows = [seqs[i] for i in batch]
            ids, mask = self.pad(rows)
            self.count_forward(len(rows))
            logits = self.model(input_ids=ids, attention_mask=mask).logits
            for r, i in enumerate(batch):
                n = len(rows[r])
                if n < 2:
                    scores[i] = np.zeros(0)
                    continue
                lp = torch.log_softmax(logits[r, : n - 1].float(), -1)
                tgt = ids[r, 1:n].to(lp.device)
                scores[i] = lp.gather(1, tgt[:, None])[:, 0].double().cpu().numpy()

        self.batched([len(s) for s in seqs], run, self.full_logits_budget())
        out = {}
        for i, t in enumerate(uniq):
            scored = seqs[i][1:]
            out[t] = {
                "loglik": float(np.sum(scores[i], dtype=np.float64)),
                "n_scored": len(scored),
                "n_tokens": len(seqs[i]) - (1 if self.prefix_id is not None else 0),
                "first_token_unscored": self.prefix_id is None,
                "tokens": self.tok.convert_ids_to_tokens(scored),
                "logprobs": [float(x) for x in scores[i]],
            }
        return [out[t] for t in texts]

    def _loglik(self, jobs: list[Job], emit: Emit) -> None:
        res = self.loglik_many([j.request.payload["text"] for j in jobs])
        for job, r in zip(jobs, res):
            if job.request.kind == LOGLIK and not job.request.payload.get("per_token"):
                r = {k: v for k, v in r.items() if k not in ("tokens", "logprobs")}
            emit(job, Outcome(response=r))

    def _candidates(self, jobs: list[Job], emit: Emit) -> None:
        self.score_candidates(jobs, emit, self.loglik_many)
