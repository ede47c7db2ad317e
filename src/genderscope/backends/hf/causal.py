"""``hf-causal:NAME_OR_PATH`` — causal (left-to-right) LMs through Hugging Face transformers.

``NAME_OR_PATH`` may be a directory, a hub name already in the local HF cache, a ``.gguf`` file,
or a directory with ``--gguf FILE``; GGUF files are converted once and cached under
``$GENDERSCOPE_HOME/models``.

Primitive request kinds (:mod:`genderscope.core.primitives`):

* ``token_logprobs`` {text} -> {tokens, offsets, logprobs}: the text is tokenised without special
  tokens (character offsets from the fast tokenizer) and scored after the model's start token x_0 =
  BOS, else EOS: logprobs[t] = ln p(x_t | x_0..x_{t-1}) in nats, log-softmax in float32.  With neither
  BOS nor EOS the first token is context only and its log-prob is None.  No EOS is appended.
* ``chat`` and ``generate`` (plain continuation, no chat template, seeded by the payload's ``seed``):
  see :mod:`~genderscope.backends.hf.generate` (greedy or seeded nucleus sampling with one generator
  per sample, left-padded length-sorted batches with a KV cache).
* ``loglikelihood`` {context, continuations}: lm-evaluation-harness's scores, the context computed once
  for its continuations (:mod:`~genderscope.backends.hf.loglikelihood`).
* ``tokenize``: answered by :class:`~genderscope.backends.hf.base.HFBackendBase`.

Sentence log-likelihoods, candidate and continuation scores are sums over ``token_logprobs``
answers (:mod:`genderscope.tasks.scoring`).  Sequences are length-sorted, right-padded with an
attention mask and packed under ``--batch-tokens``; where the model's logits are its output head applied to
its last hidden states (:func:`~genderscope.backends.hf.tensors.split_head`) the head runs only at the scored
positions, in blocks under ``full_logits_budget``; otherwise whole forwards are packed under that cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from genderscope.backends.hf import generate as hf_generate, loglikelihood as hf_loglikelihood
from genderscope.backends.hf.base import HFBackendBase
from genderscope.backends.hf.models import kinds_without_untemplated_chat
from genderscope.backends.hf.tensors import score_positions, split_head
from genderscope.backends.hf.runtime import HFOptions
from genderscope.core.backend import Emit, handles
from genderscope.core.options import opt
from genderscope.core.primitives import CHAT, GENERATE, LOGLIKELIHOOD, TOKEN_LOGPROBS, TokenLogprobsJson
from genderscope.core.requests import Job, Outcome


#: on CPU a split-head scoring forward packs at most this many tokens: SmolLM2-135M scored CrowS-Pairs ~10 %
#: faster in 512-token batches than in 2048- or 256-token ones (activations stay in cache)
CPU_SCORING_TOKENS = 512


@dataclass
class CausalOptions(HFOptions):
    batch_tokens: int = opt(
        2048, "token budget per forward pass: batch size x padded length", minimum=1, maximum=10**9
    )
    gen_batch_size: int = opt(
        16, "chat/generate: prompts generated together (left-padded batch)", minimum=1, maximum=10**6
    )


class HFCausalLMBackend(HFBackendBase):
    kind = "hf-causal"
    description = "a causal LM (GPT-2, Llama, SmolLM, Gemma, ...; GGUF files too) from a local path"
    Options = CausalOptions
    auto_class = "AutoModelForCausalLM"
    #: the model's body and output head (:func:`~genderscope.backends.hf.tensors.split_head`; None: the
    #: model's own forward computes every position's logits)
    body: Any = None
    head: Any = None

    @classmethod
    def kinds_for(cls, target: str) -> frozenset[str]:
        """Every declared kind, less ``chat`` for a model that has no chat template (a base model)."""
        return kinds_without_untemplated_chat(cls.request_kinds, target)

    @handles(CHAT)
    def _chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
        hf_generate.chat(self, jobs, emit)

    @handles(GENERATE)
    def _generate_jobs(self, jobs: list[Job], emit: Emit) -> None:
        hf_generate.generate(self, jobs, emit)

    def after_load(self) -> None:
        t = self.tok
        self.prefix_id = t.bos_token_id if t.bos_token_id is not None else t.eos_token_id
        self.settings["context_token"] = t.bos_token if t.bos_token_id is not None else t.eos_token
        # no BOS and no EOS: the first token of every text is context only (spec §3.3)
        self.settings["first_token_unscored"] = self.prefix_id is None
        self.body, self.head = split_head(self.model) or (None, None)

    def hidden(self, **kw: Any) -> Any:
        """Last hidden states of one forward pass (its logits when the head is not split off)."""
        if self.head is None:
            return self.model(**kw).logits
        return self.body(**kw).last_hidden_state

    def scoring_budget(self) -> int:
        """Token budget of a scoring forward: ``--batch-tokens`` when only the scored positions' logits are
        computed (a split head; on CPU at most ``CPU_SCORING_TOKENS``), else :meth:`full_logits_budget`."""
        if self.head is None:
            return self.full_logits_budget()
        cpu = str(self.device) == "cpu"
        return min(self.options.batch_tokens, CPU_SCORING_TOKENS) if cpu else self.options.batch_tokens

    def encode(self, text: str) -> tuple[list[int], list[list[int]]]:
        """Token ids of ``text`` (no special tokens) and their [start, end) character offsets."""
        if getattr(self.tok, "is_fast", False):
            enc = self.tok(text, add_special_tokens=False, return_offsets_mapping=True)
            return list(enc["input_ids"]), [[int(s), int(e)] for s, e in enc["offset_mapping"]]
        ids = list(self.tok(text, add_special_tokens=False)["input_ids"])
        return ids, decoded_offsets(self.tok, ids)

    def token_logprobs_many(self, texts: list[str]) -> list[TokenLogprobsJson]:
        """One ``token_logprobs`` answer per text (distinct texts scored once), batched."""
        uniq = list(dict.fromkeys(texts))
        enc = [self.encode(t) for t in uniq]
        start = [self.prefix_id] if self.prefix_id is not None else []
        seqs = [start + ids for ids, _ in enc]
        scores: list[list[float]] = [[] for _ in uniq]

        def run(batch: list[int]) -> None:
            rows = [seqs[i] for i in batch]
            ids, mask = self.pad(rows)
            self.count_forward(len(rows))
            hidden = self.hidden(input_ids=ids, attention_mask=mask)
            at = [(r, t) for r, row in enumerate(rows) for t in range(len(row) - 1)]
            targets = [rows[r][t + 1] for r, t in at]
            picked, _greedy = score_positions(self, hidden, [r for r, _ in at], [t for _, t in at], targets)
            o = 0
            for r, i in enumerate(batch):
                n = max(len(rows[r]) - 1, 0)
                scores[i] = picked[o : o + n].tolist()
                o += n

        self.batched([len(s) for s in seqs], run, self.scoring_budget())
        out: dict[str, TokenLogprobsJson] = {}
        for i, t in enumerate(uniq):
            ids, offsets = enc[i]
            lps: list[float | None] = ([] if start or not ids else [None]) + list(scores[i])
            out[t] = {"tokens": self.tok.convert_ids_to_tokens(ids), "offsets": offsets, "logprobs": lps}
        return [out[t] for t in texts]

    @handles(LOGLIKELIHOOD)
    def _loglikelihood_jobs(self, jobs: list[Job], emit: Emit) -> None:
        hf_loglikelihood.answer(self, jobs, emit)

    @handles(TOKEN_LOGPROBS)
    def _token_logprobs_jobs(self, jobs: list[Job], emit: Emit) -> None:
        res = self.token_logprobs_many([j.request.payload["text"] for j in jobs])
        for job, r in zip(jobs, res):
            emit(job, Outcome(response=r))


def decoded_offsets(tok: Any, ids: list[int]) -> list[list[int]]:
    """Offsets for a slow tokenizer (no offset mapping): token t ends where the decoded prefix
    ``ids[:t+1]`` ends, and starts where the previous token ended."""
    offsets, prev = [], 0
    for t in range(len(ids)):
        end = max(prev, len(tok.decode(ids[: t + 1], clean_up_tokenization_spaces=False)))
        offsets.append([prev, end])
        prev = end
    return offsets
