"""``hf-mlm:NAME_OR_PATH`` — masked language models through Hugging Face transformers.

Answers three primitives (genderscope.core.primitives): ``fill_mask``, ``masked_logprobs`` and
``tokenize``.  Log-softmax in float32; values in nats.

* ``fill_mask``: top-k over the whole vocabulary at the mask position of ``text`` (which must encode
  to exactly one mask token) or at ``position`` of ``ids``.
* ``masked_logprobs``: ln p(target | input) at given positions; ``mask = each`` masks one position
  per copy (pseudo-log-likelihood, Salazar et al. 2020), ``all`` masks every position in one copy,
  ``none`` scores the input as it is.  ``loss`` is torch's float32 mean cross-entropy over the
  positions (computed from the logits for ``all``/``none``, as reference implementations do).

Batching: sequences are packed, longest first, into batches under ``--batch-tokens`` and right-padded
with an attention mask.  ``mask = each`` flattens every masked copy of every request into one stream
and applies the MLM head only at the masked positions (B x V logits instead of B x T x V).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from genderscope.backends.hf.base import HFBackendBase
from genderscope.backends.hf.runtime import HFOptions
from genderscope.core.backend import Emit, handles
from genderscope.common.errors import BackendError
from genderscope.core.primitives import FILL_MASK, MASKED_LOGPROBS
from genderscope.core.requests import Job, Outcome


@dataclass
class MLMOptions(HFOptions):
    pass


class HFMaskedLMBackend(HFBackendBase):
    kind = "hf-mlm"
    description = "a masked LM (BERT, RoBERTa, XLM-R, ...) from a local directory or the local HF cache"
    Options = MLMOptions
    auto_class = "AutoModelForMaskedLM"

    def after_load(self) -> None:
        import torch

        missing = [k for k in self.loading_info.get("missing_keys", []) if not k.endswith("position_ids")]
        if missing:
            raise BackendError(
                f"{self.target}: the checkpoint lacks weights of the masked-LM head "
                f"({', '.join(sorted(missing)[:3])}...); it would score with a random head"
            )
        if self.tok.mask_token_id is None:
            raise BackendError(f"{self.target}: the tokenizer has no mask token")
        self.special_ids = frozenset(self.tok.all_special_ids)
        self.encoder, self.head = self._split(torch)
        self.settings["split_head"] = self.encoder is not None

    def _split(self, torch: Any) -> tuple[Any, Any]:
        """(encoder, head) when ``head(encoder(x))`` reproduces the model's logits, else (None, None)."""
        base = getattr(self.model, "base_model", None)
        head = None
        for name in ("cls", "lm_head", "generator_lm_head"):
            if isinstance(getattr(self.model, name, None), torch.nn.Module):
                head = getattr(self.model, name)
                break
        if base is None or head is None or base is self.model:
            return None, None
        ids = torch.tensor([self.tok("a b c")["input_ids"]], device=self.device)
        with torch.inference_mode():
            full = self.model(input_ids=ids).logits
            try:
                split = head(base(input_ids=ids)[0])
            except Exception:  # noqa: BLE001 - an unusual head signature: use full forwards
                return None, None
        if split.shape == full.shape and torch.allclose(split.float(), full.float(), atol=1e-4, rtol=1e-4):
            return base, head
        return None, None

    def head_budget(self) -> int:
        """With the split head only B x V logits exist; the full-forward fallback makes B x T x V."""
        return self.options.batch_tokens if self.encoder is not None else self.full_logits_budget()

    def _logits_at(self, rows: list[list[int]], positions: list[int]) -> Any:
        """Float32 logits (B x V) at one position per row, right-padded batch."""
        import torch

        ids, mask = self.pad(rows)
        at = torch.tensor(positions, device=self.device)
        ar = torch.arange(len(rows), device=self.device)
        self.count_forward(len(rows))
        if self.encoder is not None:
            hidden = self.encoder(input_ids=ids, attention_mask=mask)[0]
            return self.head(hidden[ar, at]).float()
        return self.model(input_ids=ids, attention_mask=mask).logits[ar, at].float()

    def _encode(self, p: dict[str, Any]) -> tuple[list[int], list[int]]:
        """(input ids, non-special positions) of a payload's ``text`` (special tokens added) or ``ids``."""
        if "ids" in p:
            special = self.special_ids
            return list(p["ids"]), [i for i, t in enumerate(p["ids"]) if t not in special]
        enc = self.tok(p["text"], return_special_tokens_mask=True)
        return list(enc["input_ids"]), [i for i, s in enumerate(enc["special_tokens_mask"]) if not s]

    # ------------------------------------------------------------ fill_mask

    @handles(FILL_MASK)
    def _fill_mask_jobs(self, jobs: list[Job], emit: Emit) -> None:
        import torch

        tok = self.tok
        rows: list[list[int]] = []
        pos: list[int] = []
        live: list[Job] = []
        for job in jobs:
            p = job.request.payload
            if "ids" in p:
                ids, k = list(p["ids"]), int(p["position"])
            else:
                ids = list(tok(p["text"])["input_ids"])
                n_mask = ids.count(tok.mask_token_id)
                if n_mask != 1:
                    emit(
                        job,
                        Outcome(error=f"the encoded input has {n_mask} mask tokens, not 1: {p['text']!r}"),
                    )
                    continue
                k = ids.index(tok.mask_token_id)
            rows.append(ids)
            pos.append(k)
            live.append(job)
        prefix = self.continuation_prefix()

        def run(batch: list[int]) -> None:
            logp = torch.log_softmax(self._logits_at([rows[i] for i in batch], [pos[i] for i in batch]), -1)
            for r, i in enumerate(batch):
                vals, idx = torch.topk(logp[r], int(live[i].request.payload.get("top_k", 5)))
                top = []
                for v, t in zip(vals.tolist(), idx.tolist()):
                    raw = tok.convert_ids_to_tokens(t)
                    text = tok.decode([t], skip_special_tokens=False, clean_up_tokenization_spaces=False)
                    top.append(
                        {
                            "id": t,
                            "token": raw,
                            "logprob": v,
                            "str": tok.decode([t]),
                            "text": text,
                            "continuation": bool(prefix) and raw.startswith(prefix),
                        }
                    )
                emit(live[i], Outcome(response={"ids": rows[i], "position": pos[i], "top": top}))

        self.batched([len(r) for r in rows], run, self.head_budget())

    # ------------------------------------------------------------ masked_logprobs

    @handles(MASKED_LOGPROBS)
    def _masked_logprobs_jobs(self, jobs: list[Job], emit: Emit) -> None:
        plans: list[tuple[Job, list[int], list[int], list[int]]] = []
        for job in jobs:
            p = job.request.payload
            ids, scored = self._encode(p)
            positions = list(p.get("positions", scored))
            if any(not 0 <= i < len(ids) for i in positions):
                emit(job, Outcome(error=f"positions {positions} out of range for {len(ids)} tokens"))
                continue
            targets = list(p["targets"]) if "targets" in p else [ids[i] for i in positions]
            plans.append((job, ids, positions, targets))
        each = [x for x in plans if x[0].request.payload.get("mask", "each") == "each"]
        whole = [x for x in plans if x[0].request.payload.get("mask", "each") != "each"]
        if each:
            self._each(each, emit)
        if whole:
            self._whole(whole, emit)

    def _each(self, plans: list[tuple[Job, list[int], list[int], list[int]]], emit: Emit) -> None:
        """One stream of masked copies (one per position of every request), head at the masked position."""
        import numpy as np
        import torch

        copies = [(j, t, tgt) for j, (_job, _ids, ps, ts) in enumerate(plans) for t, tgt in zip(ps, ts)]
        lengths = [len(plans[j][1]) for j, _t, _g in copies]
        lp = np.zeros(len(copies), dtype=np.float64)
        mask_id = self.tok.mask_token_id

        def run(batch: list[int]) -> None:
            rows, pos, tgt = [], [], []
            for c in batch:
                j, t, g = copies[c]
                ids = list(plans[j][1])
                ids[t] = mask_id
                rows.append(ids)
                pos.append(t)
                tgt.append(g)
            logits = self._logits_at(rows, pos)
            got = torch.log_softmax(logits, -1).gather(1, torch.tensor(tgt, device=logits.device)[:, None])
            lp[batch] = got[:, 0].double().cpu().numpy()

        self.batched(lengths, run, self.head_budget())
        start = 0
        for job, ids, positions, _targets in plans:
            sel = lp[start : start + len(positions)]
            start += len(positions)
            loss = float(-torch.tensor(sel, dtype=torch.float32).mean()) if len(sel) else float("nan")
            resp = {"ids": ids, "positions": positions, "logprobs": [float(x) for x in sel], "loss": loss}
            emit(job, Outcome(response=resp))

    def _whole(self, plans: list[tuple[Job, list[int], list[int], list[int]]], emit: Emit) -> None:
        """``mask = all`` / ``none``: one full forward per request, logits at its positions."""
        import torch

        mask_id = self.tok.mask_token_id
        rows = []
        for job, ids, positions, _t in plans:
            row = list(ids)
            if job.request.payload.get("mask") == "all":
                for i in positions:
                    row[i] = mask_id
            rows.append(row)
        out: list[Any] = [None] * len(plans)

        def run(batch: list[int]) -> None:
            ids, mask = self.pad([rows[i] for i in batch])
            self.count_forward(len(batch))
            logits = self.model(input_ids=ids, attention_mask=mask).logits
            for r, i in enumerate(batch):
                _job, _ids, positions, targets = plans[i]
                if not positions:
                    out[i] = ([], float("nan"))
                    continue
                at = logits[r, torch.tensor(positions, device=logits.device)].float()
                tgt = torch.tensor(targets, device=logits.device)
                got = torch.log_softmax(at, -1).gather(1, tgt[:, None])[:, 0]
                loss = float(torch.nn.functional.cross_entropy(at, tgt))
                out[i] = (got.double().cpu().tolist(), loss)

        self.batched([len(r) for r in rows], run, self.full_logits_budget())
        for (job, ids, positions, _t), (lps, loss) in zip(plans, out):
            emit(job, Outcome(response={"ids": ids, "positions": positions, "logprobs": lps, "loss": loss}))
