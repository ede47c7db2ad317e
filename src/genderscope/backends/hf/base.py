"""The base class of the Hugging Face backends (``hf-mlm``, ``hf-causal``): lazy loading, right padding,
token-budget batching and the ``tokenize`` primitive.  torch is imported here and in the backend modules
only; the core never imports it."""

from __future__ import annotations

from typing import Any, Callable

from genderscope.backends.hf.batching import run_halving, token_budget_batches
from genderscope.backends.hf.models import load_pretrained, locate, source_fingerprint
from genderscope.backends.hf.runtime import CPU_LOGITS_FLOATS, HFOptions, setup_torch, torch_dtype
from genderscope.core.backend import Backend, Emit, handles
from genderscope.core.primitives import TOKENIZE
from genderscope.core.requests import Job, Outcome
from genderscope.core.runner import paused_gc, settle_gc


def _leace_mark(source: Any) -> str:
    """``|leace=<sha256 prefix>`` when the model folder carries a LEACE eraser (it changes every answer)."""
    from genderscope.backends.hf.models import file_sha256

    path = source.path / "leace.pt" if source.path is not None else None
    return f"|leace={file_sha256(path)[:16]}" if path is not None and path.is_file() else ""


def input_device(model: Any) -> Any:
    """Device of the input embeddings (the first device under ``--device-map auto``)."""
    return model.get_input_embeddings().weight.device


class HFBackendBase(Backend):
    """Lazy loading, right padding and token-budget batching.

    Subclasses set ``kind`` and ``auto_class`` (name of the transformers Auto class) and declare one
    ``@handles(KIND)`` method per primitive of genderscope.core.primitives; ``tokenize`` is answered
    here for both families.  The model loads on the first request (:meth:`prepare`), so a run answered
    entirely from the store never loads it.
    """

    auto_class: str = ""
    Options = HFOptions

    def __init__(self, target: str, options: HFOptions):
        super().__init__(target, options)
        self.source = locate(target, options.gguf, options.revision)
        self._fp = f"{self.kind}:{source_fingerprint(self.source)}|dtype={options.dtype}" + _leace_mark(
            self.source
        )
        self.model: Any = None
        self.tok: Any = None
        self.settings: dict[str, Any] = {}
        self.counters = {"forward_passes": 0, "sequences": 0, "oom_halvings": 0}

    @property
    def fingerprint(self) -> str:
        return self._fp

    def after_load(self) -> None:
        """Checks and precomputation once the model is loaded."""

    def load(self) -> None:
        """Import torch and transformers and read the model with the cyclic collector paused, then settle
        what that left alive into the collector's oldest generation (:func:`settle_gc`): their few hundred
        thousand new objects otherwise set off ~6 full collector passes during the load and long young-
        generation passes after it (0.9–1.4 s of a small model's CPU run)."""
        if self.model is not None:
            return
        with paused_gc():
            import transformers

            self.settings = setup_torch(self.options)
            dtype = torch_dtype(self.options.dtype, self.settings["device"])
            self.model, self.tok, self.loading_info = load_pretrained(
                getattr(transformers, self.auto_class),
                self.source,
                dtype,
                self.settings["device"],
                self.options.device_map,
            )
            self.device = input_device(self.model)
            if self.options.device_map:
                placed = getattr(self.model, "hf_device_map", None) or {}
                self.settings["device_map"] = self.options.device_map
                self.settings["devices"] = sorted({str(d) for d in placed.values()}) or [str(self.device)]
            self.pad_id = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
            if self.source.path is not None and (self.source.path / "leace.pt").is_file():
                from genderscope.debias.leace import attach  # a folder written by `genderscope debias leace`

                self.settings["leace"] = attach(self.model, self.source.path)
            self.after_load()
            settle_gc()  # before the collector resumes: its first young pass would walk all of it

    def prepare(self, kinds: frozenset[str]) -> None:
        self.load()

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out.update(self.settings)
        return out

    def stats(self) -> dict[str, Any]:
        return dict(self.counters, **self.settings)

    def close(self) -> None:
        self.model = None

    def pad(self, rows: list[list[int]]) -> tuple[Any, Any]:
        """Right-padded ids and attention mask (1 on real tokens) on the input device."""
        import torch

        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
            mask[i, : len(r)] = 1
        return ids.to(self.device), mask.to(self.device)

    def batched(
        self, lengths: list[int], run: Callable[[list[int]], None], budget: int | None = None
    ) -> None:
        """Call ``run`` on index batches packed under ``budget`` (default ``--batch-tokens``); halve on
        out-of-memory."""
        import torch

        def halved() -> None:
            self.counters["oom_halvings"] += 1

        with torch.inference_mode():
            for batch in token_budget_batches(lengths, budget or self.options.batch_tokens):
                run_halving(batch, run, halved)

    def full_logits_budget(self) -> int:
        """Token budget of forwards that materialise all B x T x V logits.  On CPU ``--batch-tokens`` is
        capped so that the logits stay under CPU_LOGITS_FLOATS floats (32 MiB): larger logit tensors fall out
        of cache and made compat ABC ~15% slower at V = 8k (1 thread); the cap is at least 64 tokens."""
        if str(self.device) != "cpu":
            return self.options.batch_tokens
        vocab = int(getattr(self.model.config, "vocab_size", 0) or len(self.tok))
        return min(self.options.batch_tokens, max(64, CPU_LOGITS_FLOATS // max(vocab, 1)))

    def count_forward(self, n_rows: int) -> None:
        self.counters["forward_passes"] += 1
        self.counters["sequences"] += n_rows

    def continuation_prefix(self) -> str | None:
        """The word-piece continuation marker of the tokenizer (``##`` for WordPiece), else None."""
        try:
            return getattr(self.tok.backend_tokenizer.model, "continuing_subword_prefix", None) or None
        except AttributeError:
            return None

    @handles(TOKENIZE)
    def tokenize_jobs(self, jobs: list[Job], emit: Emit) -> None:
        """``tokenize`` (genderscope.core.primitives.TokenizePayload -> TokenizeResponse)."""
        tok = self.tok
        specials = {
            name: getattr(tok, f"{name}_token", None)
            for name in ("mask", "cls", "sep", "bos", "eos", "unk", "pad")
        }
        special_ids = set(tok.all_special_ids)
        # the whole vocabulary as a dict only when some job looks token strings up
        vocab = tok.get_vocab() if any(j.request.payload.get("lookup") for j in jobs) else {}
        common = {
            "specials": specials,
            "unk_id": tok.unk_token_id,
            "continuation_prefix": self.continuation_prefix(),
            "dtype": self.settings.get("dtype"),
        }
        for job in jobs:
            p = job.request.payload
            if p.get("add_special_tokens"):
                ids = list(tok(p["text"])["input_ids"])
                toks = tok.convert_ids_to_tokens(ids)
            else:
                toks = tok.tokenize(p["text"])
                ids = list(tok.convert_tokens_to_ids(toks))
            resp = {
                "ids": ids,
                "tokens": list(toks),
                "special": [i in special_ids for i in ids],
                "lookup": [vocab.get(w) for w in p.get("lookup", [])],
                **common,
            }
            emit(job, Outcome(response=resp))
