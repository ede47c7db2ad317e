"""The fake server's language model: a Hugging Face causal LM directory (``save_pretrained``) that
answers ``/v1/completions`` (echoed prompt log-probs, generation), ``/tokenize`` and ``/detokenize``
with real computation, following vLLM's OpenAI-compatible server.

* Prompt log-probs: ``lp[t] = ln softmax(logits[t-1])[x_t]`` in float32, natural logs of the full
  softmax (temperature never changes them); the first prompt token has none (``null``).
* A text prompt is tokenised with the tokenizer's special tokens (``add_special_tokens``, default true:
  a BOS the tokenizer adds comes first); special-token strings inside the text (``<s>``) are parsed as
  special tokens, as Hugging Face tokenizers do.  A prompt that is a list of ints is taken as token ids.
* Token strings (vLLM's detokenised tokens): a special token the tokenizer added is its string
  (``<s>``); every other token of a text prompt is the text from the previous token's end to its own end
  (leading whitespace belongs to the token, as with byte-level BPE), so the prompt's tokens join to the
  text; ids prompts and generated tokens are decoded incrementally; ``top_logprobs`` keys are tokens as
  they continue a text (:meth:`EchoModel.token_str`), the prompt's own token as echoed.
  ``text_offset[i]`` = Σ len of the token strings before i (vLLM's rule: an added BOS shifts the
  offsets by its string's length).
* Concurrent requests are scored together: a worker thread takes every queued sequence under a token
  budget and runs one right-padded forward pass.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

TOP_MAX = 5  # largest `logprobs` (top-k) accepted, as OpenAI's legacy completions API


class PromptError(ValueError):
    """A request the model cannot answer (HTTP 400 with this message)."""


@dataclass
class Scored:
    """One scored sequence: ``lps[t-1]`` = ln p(ids[t] | ids[:t]); ``top[t-1]`` = k best (id, lp) there;
    ``next_*`` = greedy next token after the sequence (id, its lp, its top-k)."""

    lps: list[float]
    top: list[list[tuple[int, float]]]
    next_id: int
    next_lp: float
    next_top: list[tuple[int, float]]


class EchoModel:
    """Tokenizer + causal LM loaded from ``model_dir`` (CPU, float32, eval mode)."""

    def __init__(self, model_dir: str, batch_tokens: int = 4096, threads: int = 0):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads > 0:
            torch.set_num_threads(threads)  # process-wide: only for the server in its own process
        self.dir = str(Path(model_dir))
        self.tok = AutoTokenizer.from_pretrained(self.dir)
        self.model = AutoModelForCausalLM.from_pretrained(self.dir, dtype=torch.float32).eval()
        cfg = self.model.config
        self.max_len = int(getattr(cfg, "n_positions", None) or getattr(cfg, "max_position_embeddings", 2048))
        self.pad_id = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        self.batch_tokens = batch_tokens
        self.forwards = 0
        self._strs: dict[int, str] = {}
        specials = set(self.tok.all_special_ids)
        self._anchor = next(i for i in range(len(self.tok)) if i not in specials)
        self._jobs: queue.Queue[tuple[list[list[int]], int, Callable[[Any], None]]] = queue.Queue()
        threading.Thread(target=self._worker, name="fake-openai-model", daemon=True).start()

    # -- tokens --------------------------------------------------------------------------
    def encode(self, prompt: str | list[int], add_special_tokens: bool = True) -> tuple[list[int], list[str]]:
        """Token ids and token strings of a prompt (text or ids), as the module docstring says."""
        if isinstance(prompt, list):
            ids = [int(i) for i in prompt]
            if any(i < 0 or i >= len(self.tok) for i in ids):
                raise PromptError(f"token id out of range (vocabulary size {len(self.tok)})")
            return ids, self.decode_steps([], ids)
        enc = self.tok(prompt, add_special_tokens=add_special_tokens, return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        specials = set(self.tok.all_special_ids)
        strs, prev = [], 0
        for i, (s, e) in zip(ids, enc["offset_mapping"]):
            if s == e and i in specials:  # added by the tokenizer, not in the text
                strs.append(self.tok.convert_ids_to_tokens(i))
            else:
                strs.append(prompt[prev:e])
                prev = max(prev, e)
        return ids, strs

    def decode_steps(self, before: list[int], new: list[int]) -> list[str]:
        """Strings that ``new`` adds one token at a time to the decoded text of ``before``."""
        out, ids = [], list(before)
        text = self.decode(ids)
        for i in new:
            ids.append(i)
            nxt = self.decode(ids)
            out.append(nxt[len(text) :] if nxt.startswith(text) else self.decode([i]))
            text = nxt
        return out

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def token_str(self, i: int) -> str:
        """Token ``i`` as it continues a text (the key in ``top_logprobs``): what decoding adds when
        ``i`` follows an ordinary token (a WordPiece-style decoder puts a space before words)."""
        got = self._strs.get(i)
        if got is None:
            a = self.decode([self._anchor])
            b = self.decode([self._anchor, i])
            got = self._strs[i] = b[len(a) :] if b.startswith(a) else self.decode([i])
        return got

    # -- scoring -------------------------------------------------------------------------
    def score(self, seqs: list[list[int]], k: int, done: Callable[[Any], None]) -> None:
        """Queue ``seqs`` for scoring; ``done(list[Scored])`` (or ``done(exception)``) runs on the
        worker thread."""
        self._jobs.put((seqs, k, done))

    def _worker(self) -> None:
        while True:
            batch = [self._jobs.get()]
            tokens = sum(len(s) for s in batch[0][0])
            while tokens < self.batch_tokens:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                batch.append(job)
                tokens += sum(len(s) for s in job[0])
            seqs = [s for job in batch for s in job[0]]
            k = max(job[1] for job in batch)
            try:
                scored: list[Any] = self.forward(seqs, k)
            except Exception as exc:  # noqa: BLE001 - handed to every waiting request
                scored = [exc] * len(seqs)
            at = 0
            for job_seqs, _k, done in batch:
                part = scored[at : at + len(job_seqs)]
                at += len(job_seqs)
                bad = [x for x in part if isinstance(x, Exception)]
                done(bad[0] if bad else part)

    def forward(self, seqs: list[list[int]], k: int) -> list[Scored]:
        """Score ``seqs`` in right-padded batches of at most ``batch_tokens`` tokens."""
        import torch

        out: list[Scored | None] = [None] * len(seqs)
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
        while order:
            width = len(seqs[order[0]])
            n = max(1, self.batch_tokens // max(1, width))
            chunk, order = order[:n], order[n:]
            ids = torch.full((len(chunk), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for r, i in enumerate(chunk):
                ids[r, : len(seqs[i])] = torch.tensor(seqs[i])
                mask[r, : len(seqs[i])] = 1
            self.forwards += 1
            with torch.inference_mode():
                logits = self.model(input_ids=ids, attention_mask=mask).logits
            for r, i in enumerate(chunk):
                n_i = len(seqs[i])
                lp = torch.log_softmax(logits[r, :n_i].float(), -1)
                tgt = ids[r, 1:n_i]
                got = lp[:-1].gather(1, tgt[:, None])[:, 0].double().tolist()
                kk = min(max(k, 1), lp.shape[-1])
                tv, ti = lp.topk(kk, -1)
                tv, ti = tv.double().tolist(), ti.tolist()
                top = [list(zip(ti[t], tv[t]))[:k] for t in range(n_i)]
                out[i] = Scored(got, top[:-1], ti[-1][0], tv[-1][0], top[-1])
        return out  # type: ignore[return-value]

    def sample(
        self, ids: list[int], max_tokens: int, temperature: float, top_p: float, seed: int
    ) -> tuple[list[int], list[float], str]:
        """Generate up to ``max_tokens`` after ``ids`` (greedy at temperature 0, else seeded nucleus
        sampling); returns (ids, their log-probs under the full softmax, finish_reason)."""
        import torch

        gen = torch.Generator().manual_seed(seed)
        seq, got, lps = list(ids), [], []
        eos = self.tok.eos_token_id
        while len(got) < max_tokens and len(seq) < self.max_len:
            with torch.inference_mode():
                logits = (
                    self.model(
                        input_ids=torch.tensor([seq]),
                        attention_mask=torch.ones(1, len(seq), dtype=torch.long),
                    )
                    .logits[0, -1]
                    .float()
                )
            lp = torch.log_softmax(logits, -1)
            if temperature <= 0:
                nxt = int(lp.argmax())
            else:
                probs = torch.softmax(logits / temperature, -1)
                sp, si = probs.sort(descending=True)
                keep = (sp.cumsum(0) - sp) < top_p
                nxt = int(si[keep][torch.multinomial(sp[keep], 1, generator=gen)])
            got.append(nxt)
            lps.append(float(lp[nxt]))
            seq.append(nxt)
            if nxt == eos:
                return got, lps, "stop"
        return got, lps, "length"
