"""``hf-mlm:NAME_OR_PATH`` — masked language models through Hugging Face transformers.

Request kinds (payloads are text, answers are numbers and strings; see docs/architecture.md):

* ``fill_mask`` {left, right, top_k, drop_boundary_piece, glue_left_if_mask, mask_override, float32}
  -> {input, top: [{id, token, str, text, continuation, logprob}][, mask_not_tokenizer_mask]}: the model
  input is ``left + M + right`` with M the tokenizer's mask token (or ``mask_override``); top-k over the
  whole vocabulary.
* ``pll`` {text, per_token} -> {loglik, n_scored, n_tokens[, tokens, logprobs]}: pseudo-log-
  likelihood (Salazar et al. 2020): Σ_t log p(x_t | x with x_t masked) over non-special tokens,
  log-softmax in float32, sums in float64.
* ``candidates`` {left, right, candidates} -> {loglik: {w: PLL}, n_scored: {w: N}}.
* ``cross_entropy`` {text, start, end, find, replacements, float32} -> {tokens, index, n_tokens, ce, unk
  [, start_end_not_special]}:
  GenDa Lens's ABC procedure: tokenize ``S + " " + text + " " + E``, replace the first token in
  ``find`` by each replacement literally, and give for the original and every variant the mean
  cross-entropy (float32, nats) against the *original* ids at all T positions, nothing masked.
* A payload with ``float32: true`` (GenDa Lens parity) is refused unless the model runs in float32.
* ``tokenize`` {text, add_special_tokens} -> {tokens, continuation_prefix}.

Batching: every sequence of a call is packed, longest first, into batches under
``--batch-tokens``; rows are right-padded with an attention mask so that positions are exact.
PLL flattens all masked copies of all sentences into one stream and applies the MLM head only
at the masked positions (B x V logits instead of B x T x V).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from genderscope.backends import hf_common as C
from genderscope.core.backend import Emit
from genderscope.core.errors import BackendError
from genderscope.backends import hf_likelihood
from genderscope.core.requests import MASKED_PAIR_LOGPROB, Job, Outcome

FILL_MASK = "fill_mask"
PLL = "pll"
CANDIDATES = "candidates"
CROSS_ENTROPY = "cross_entropy"
TOKENIZE = "tokenize"

BOUNDARY_PIECES = ("\u2581", "\u0120")  # SentencePiece ▁ and byte-level Ġ


def masked_text(left: str, right: str, mask: str, glue_left_if_mask: str | None = None) -> str:
    """``left + mask + right``; GenDa Lens's DanskBert quirk (spec §3.1 step 6): when ``mask`` equals
    ``glue_left_if_mask``, the space before the mask is removed (`` <mask>`` -> ``<mask>``)."""
    if glue_left_if_mask == mask and left.endswith(" "):
        left = left[:-1]
    return left + mask + right


@dataclass
class MLMOptions(C.HFOptions):
    pass


class HFMaskedLMBackend(C.HFBackendBase):
    kind = "hf-mlm"
    description = "a masked LM (BERT, RoBERTa, XLM-R, ...) from a local directory or the local HF cache"
    Options = MLMOptions
    request_kinds = frozenset({FILL_MASK, PLL, CANDIDATES, CROSS_ENTROPY, TOKENIZE, MASKED_PAIR_LOGPROB})
    auto_class = "AutoModelForMaskedLM"

    def handlers(self) -> dict[str, Callable[[list[Job], Emit], None]]:
        return {
            MASKED_PAIR_LOGPROB: lambda jobs, emit: hf_likelihood.masked_pair_logprob(self, jobs, emit),
            TOKENIZE: self.tokenize_jobs,
            FILL_MASK: self._fill_mask,
            PLL: self._pll,
            CANDIDATES: self._candidates,
            CROSS_ENTROPY: self._cross_entropy,
        }

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

    def require_float32(self, jobs: list[Job]) -> None:
        """GenDa Lens parity (payload ``float32``) is defined in float32 only (spec §7)."""
        if any(j.request.payload.get("float32") for j in jobs) and self.settings.get("dtype") != "float32":
            raise BackendError(
                f"--mode genda-lens reproduces GenDa Lens in float32, but the model runs in "
                f"{self.settings.get('dtype')}; pass --dtype float32 (reduced precision: --mode default only)"
            )

    def head_budget(self) -> int:
        """With the split head only B x V logits exist; the full-forward fallback makes B x T x V."""
        return self.options.batch_tokens if self.encoder is not None else self.full_logits_budget()

    # ------------------------------------------------------------ forward helpers

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

    # ------------------------------------------------------------ kinds

    def continuation_prefix(self) -> str | None:
        try:
            return getattr(self.tok.backend_tokenizer.model, "continuing_subword_prefix", None) or None
        except AttributeError:
            return None

    def _fill_mask(self, jobs: list[Job], emit: Emit) -> None:
        import torch

        self.require_float32(jobs)
        tok = self.tok
        rows: list[list[int]] = []
        pos: list[int] = []
        texts: list[str] = []
        live: list[Job] = []
        for job in jobs:
            p = job.request.payload
            m = p.get("mask_override") or tok.mask_token
            text = masked_text(p["left"], p["right"], m, p.get("glue_left_if_mask"))
            ids = tok(text)["input_ids"]
            if p.get("drop_boundary_piece"):
                k = ids.index(tok.mask_token_id) if tok.mask_token_id in ids else -1
                if k > 0 and tok.convert_ids_to_tokens(ids[k - 1]) in BOUNDARY_PIECES:
                    del ids[k - 1]
            n_mask = ids.count(tok.mask_token_id)
            if n_mask != 1:
                emit(job, Outcome(error=f"the encoded input has {n_mask} mask tokens, not 1: {text!r}"))
                continue
            rows.append(ids)
            pos.append(ids.index(tok.mask_token_id))
            texts.append(text)
            live.append(job)
        prefix = self.continuation_prefix()

        def run(batch: list[int]) -> None:
            logp = torch.log_softmax(self._logits_at([rows[i] for i in batch], [pos[i] for i in batch]), -1)
            for r, i in enumerate(batch):
                k = int(live[i].request.payload.get("top_k", 5))
                vals, idx = torch.topk(logp[r], k)
                top = []
                for v, t in zip(vals.tolist(), idx.tolist()):
                    raw = tok.convert_ids_to_tokens(t)
                    top.append(
                        {
                            "id": t,
                            "token": raw,
                            "logprob": v,
                            "str": tok.decode([t]),
                            "text": tok.decode(
                                [t], skip_special_tokens=False, clean_up_tokenization_spaces=False
                            ),
                            "continuation": bool(prefix) and raw.startswith(prefix),
                        }
                    )
                resp: dict[str, Any] = {"input": texts[i], "top": top}
                if live[i].request.payload.get("mask_override") not in (None, tok.mask_token):
                    resp["mask_not_tokenizer_mask"] = True  # the task warns (spec §3.1)
                emit(live[i], Outcome(response=resp))

        self.batched([len(r) for r in rows], run, self.head_budget())

    def encode_scored(self, text: str) -> tuple[list[int], list[int]]:
        """(ids with special tokens, positions of the non-special tokens)."""
        enc = self.tok(text, return_special_tokens_mask=True)
        ids = enc["input_ids"]
        return ids, [i for i, s in enumerate(enc["special_tokens_mask"]) if not s]

    def pll_many(self, texts: list[str]) -> list[dict[str, Any]]:
        """PLL of each distinct text: one stream of masked copies, batched by the token budget."""
        import numpy as np
        import torch

        uniq = list(dict.fromkeys(texts))
        enc = [self.encode_scored(t) for t in uniq]
        copies = [(s, t) for s, (_ids, scored) in enumerate(enc) for t in scored]
        lengths = [len(enc[s][0]) for s, _ in copies]
        lp = np.zeros(len(copies), dtype=np.float64)
        mask_id = self.tok.mask_token_id

        def run(batch: list[int]) -> None:
            rows, pos, tgt = [], [], []
            for c in batch:
                s, t = copies[c]
                ids = list(enc[s][0])
                tgt.append(ids[t])
                ids[t] = mask_id
                rows.append(ids)
                pos.append(t)
            logits = self._logits_at(rows, pos)
            got = torch.log_softmax(logits, -1).gather(1, torch.tensor(tgt, device=logits.device)[:, None])
            lp[batch] = got[:, 0].double().cpu().numpy()

        self.batched(lengths, run, self.head_budget())
        sent = np.array([s for s, _ in copies], dtype=np.int64)
        sums = np.zeros(len(uniq), dtype=np.float64)
        np.add.at(sums, sent, lp)  # scatter-add per sentence, float64
        starts = np.concatenate([[0], np.cumsum([len(e[1]) for e in enc])])
        out: dict[str, dict[str, Any]] = {}
        for s, text in enumerate(uniq):
            ids, scored = enc[s]
            sel = lp[starts[s] : starts[s + 1]]
            out[text] = {
                "loglik": float(sums[s]),
                "n_scored": len(scored),
                "n_tokens": len(ids),
                "tokens": [self.tok.convert_ids_to_tokens(ids[t]) for t in scored],
                "logprobs": [float(x) for x in sel],
            }
        return [out[t] for t in texts]

    def _pll(self, jobs: list[Job], emit: Emit) -> None:
        res = self.pll_many([j.request.payload["text"] for j in jobs])
        for job, r in zip(jobs, res):
            if not job.request.payload.get("per_token"):
                r = {k: v for k, v in r.items() if k not in ("tokens", "logprobs")}
            emit(job, Outcome(response=r))

    def _candidates(self, jobs: list[Job], emit: Emit) -> None:
        self.score_candidates(jobs, emit, self.pll_many)

    def _cross_entropy(self, jobs: list[Job], emit: Emit) -> None:
        import torch

        self.require_float32(jobs)
        tok = self.tok
        specials = set(tok.all_special_tokens)
        seqs: list[tuple[int, list[int]]] = []  # (job index, ids) per sequence to run
        targets: list[list[int]] = []
        meta: list[dict[str, Any]] = []
        for j, job in enumerate(jobs):
            p = job.request.payload
            start = p.get("start") or tok.cls_token or tok.bos_token
            end = p.get("end") or tok.sep_token or tok.eos_token
            if start is None or end is None:
                emit(job, Outcome(error="the tokenizer has no cls/bos or sep/eos token; pass start/end"))
                meta.append({})
                targets.append([])
                continue
            toks = tok.tokenize(f"{start} {p['text']} {end}")
            find = p.get("find") or []
            k = next((i for i, t in enumerate(toks) if t in find), None)
            reps = p.get("replacements") or []
            if reps and k is None:
                emit(job, Outcome(error=f"no token among {find} in the tokenisation {toks}"))
                meta.append({})
                targets.append([])
                continue
            ids = tok.convert_tokens_to_ids(toks)
            variants = [ids]
            unk = []
            for r in reps:
                v = list(toks)
                v[k] = r
                vid = tok.convert_tokens_to_ids(v)
                unk.append(vid[k] == tok.unk_token_id and r != tok.unk_token)
                variants.append(vid)
            meta.append(
                {"tokens": toks, "index": k, "n_tokens": len(toks), "unk": unk, "ce": [None] * len(variants)}
            )
            if start not in specials or end not in specials:
                meta[-1]["start_end_not_special"] = [x for x in (start, end) if x not in specials]
            targets.append(ids)
            for v in variants:
                seqs.append((j, v))
                meta[-1].setdefault("_slots", []).append(len(seqs) - 1)
        ce = [0.0] * len(seqs)

        def run(batch: list[int]) -> None:
            ids, mask = self.pad([seqs[i][1] for i in batch])
            self.count_forward(len(batch))
            logits = self.model(input_ids=ids, attention_mask=mask).logits
            for r, i in enumerate(batch):
                j, v = seqs[i]
                tgt = torch.tensor(targets[j], device=logits.device)
                ce[i] = float(torch.nn.functional.cross_entropy(logits[r, : len(v)].float(), tgt))

        self.batched([len(s[1]) for s in seqs], run, self.full_logits_budget())
        for j, job in enumerate(jobs):
            m = meta[j]
            if not m:
                continue
            slots = m.pop("_slots")
            m["ce"] = [ce[s] for s in slots]
            emit(job, Outcome(response=m))
