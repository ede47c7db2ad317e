"""Shared machinery of the Hugging Face backends (``hf-mlm``, ``hf-causal``).

Device and dtype choice, the torch thread count, weight fingerprints, GGUF loading with a
converted cache, packing of sequences into batches under a token budget (batch size x padded
length <= budget) and automatic halving of a batch on out-of-memory.  torch is imported
here and in the backend modules only; the core never imports it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from genderscope.core.backend import Backend, Emit
from genderscope.core.errors import BackendError, UsageError
from genderscope.core.options import opt
from genderscope.core.paths import home
from genderscope.core.requests import Job, Outcome

T = TypeVar("T")

DTYPES = ("auto", "float32", "float16", "bfloat16")
CPU_LOGITS_FLOATS = 1 << 23  # cap of a B x T x V logits tensor on CPU (see HFBackendBase.full_logits_budget)


@dataclass
class HFOptions:
    """Options shared by both Hugging Face backends."""

    device: str = opt("cpu", "where the model runs", ("cpu", "cuda", "auto"))
    device_map: str | None = opt(None, "'auto' spreads a model over several GPUs (accelerate)")
    dtype: str = opt(
        "float32", "weights/compute dtype (reduced precision is recorded in the fingerprint)", DTYPES
    )
    batch_tokens: int = opt(4096, "token budget per forward pass: batch size x padded length")
    threads: int | None = opt(
        None,
        "torch CPU threads (default: env GENDERSCOPE_TORCH_THREADS, else all available cores; "
        "0 = the cores not kept busy by other processes)",
    )
    gguf: str | None = opt(None, "GGUF file name inside the model directory")
    revision: str | None = opt(None, "model revision (hub models already in the local HF cache)")

    def __post_init__(self) -> None:
        if self.batch_tokens < 1:
            raise ValueError("--batch-tokens must be at least 1")
        if self.device_map not in (None, "auto"):
            raise ValueError("--device-map takes only 'auto'")
        if self.threads is not None and self.threads < 1:
            raise ValueError("--threads must be at least 1")


def available_cpus() -> int:
    """CPUs this process may use: the affinity set, capped by a cgroup v2 CPU quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, int(int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return max(1, n)


def others_load() -> float:
    """CPUs kept busy by other processes: the 1-minute load average minus this process's share of it.

    Own share = u · (1 − e^(−age/60 s)), u = this process's CPU seconds / its age in seconds (the load
    average is an exponential average with a 60 s time constant); 0 where the load is unknown.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0
    own = 0.0
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        age = float(Path("/proc/uptime").read_text().split()[0]) - start
        if age > 0:
            own = time.process_time() / age * (1.0 - math.exp(-age / 60.0))
    except (OSError, ValueError, IndexError):
        pass
    return max(0.0, load - own)


def resolve_threads(option: int | None) -> int:
    """Thread count: ``--threads N`` (N > 0) > env ``GENDERSCOPE_TORCH_THREADS`` > all available cores.

    ``--threads 0`` asks for the free cores instead: round(available CPUs − :func:`others_load`), at
    least 1. On a shared machine more threads than free cores make every matrix product wait for
    descheduled threads (SmolLM2 chat generation: 2 threads on 2 busy cores ran 2.5x slower than 1).
    The test suite sets the variable to 1 when it runs tests in parallel.
    """
    if option is not None and option > 0:
        return option
    n = available_cpus()
    if option == 0:
        return max(1, min(n, int(n - others_load() + 0.5)))
    env = os.environ.get("GENDERSCOPE_TORCH_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise UsageError(f"GENDERSCOPE_TORCH_THREADS={env!r} is not an integer") from None
    return n


def resolve_device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: no CUDA device is available (use --device cpu)")
    return name


def torch_dtype(name: str, device: str) -> Any:
    import torch

    if name == "auto":
        return torch.float32 if device == "cpu" else torch.bfloat16
    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]


def setup_torch(options: HFOptions) -> dict[str, Any]:
    """Set threads (recorded), disable TF32 for float32 parity; returns the settings used."""
    import torch

    threads = resolve_threads(options.threads)
    torch.set_num_threads(threads)
    device = resolve_device(options.device)
    tf32: dict[str, Any] = {}
    if device == "cuda":  # a process-wide setting: recorded (spec §8.2 pitfall 17)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        tf32 = {"tf32": False}
    return {
        **tf32,
        "device": device,
        "num_threads": threads,
        "dtype": str(torch_dtype(options.dtype, device)).split(".")[-1],
    }


# ---------------------------------------------------------------- model files and fingerprints

_WEIGHT_RE = re.compile(r".*\.(safetensors|bin|gguf|pt|pth|h5|msgpack)$")


def file_sha256(path: Path) -> str:
    """sha256 of a file, cached in ``$GENDERSCOPE_HOME/models/hashes.json`` by (path, size, mtime)."""
    st = path.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    cache_file = home() / "models" / "hashes.json"
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    if key in cache:
        return cache[key]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    cache[key] = h.hexdigest()
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache))
    tmp.replace(cache_file)
    return cache[key]


def weights_hash(files: Sequence[Path]) -> str:
    """One hex digest over the sha256 of every weight file (sorted by name)."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda p: p.name):
        h.update(f.name.encode() + b"\0" + file_sha256(f).encode() + b"\0")
    return h.hexdigest()[:16]


@dataclass
class ModelSource:
    """Where a model comes from: a local directory (optionally with a GGUF file in it) or a hub name."""

    spec: str
    path: Path | None
    gguf_file: str | None
    revision: str | None

    @property
    def load_name(self) -> str:
        return str(self.path) if self.path is not None else self.spec


def locate(target: str, gguf: str | None = None, revision: str | None = None) -> ModelSource:
    """Resolve ``NAME_OR_PATH`` (a directory, a ``.gguf`` file, or a hub name in the local cache)."""
    p = Path(target).expanduser()
    if target.endswith(".gguf"):
        if not p.is_file():
            raise BackendError(f"GGUF file {target} does not exist")
        return ModelSource(target, p.parent, p.name, revision)
    if p.is_dir():
        if gguf and not (p / gguf).is_file():
            raise BackendError(f"--gguf {gguf}: no such file in {p}")
        return ModelSource(target, p, gguf, revision)
    if p.exists():
        raise BackendError(f"{target} is a file but not a .gguf file; pass the model directory")
    try:  # a hub name already in the local cache (this tool never downloads models)
        from huggingface_hub import snapshot_download

        local = Path(snapshot_download(target, revision=revision, local_files_only=True))
        return ModelSource(target, local, gguf, revision)
    except Exception:  # noqa: BLE001 - any failure means "not available locally"
        raise BackendError(
            f"model {target!r} is neither a local directory nor in the local Hugging Face "
            "cache; download it first (e.g. `huggingface-cli download NAME`) or pass a path"
        ) from None


def source_fingerprint(src: ModelSource) -> str:
    """Model name + hash of its weight file(s) (or the revision when there are none)."""
    assert src.path is not None
    if src.gguf_file:
        files = [src.path / src.gguf_file]
    else:
        files = [
            f
            for f in src.path.iterdir()
            if f.is_file() and _WEIGHT_RE.match(f.name) and not f.name.endswith(".gguf")
        ]
    if files:
        return f"{Path(src.spec).name if src.path else src.spec}|w={weights_hash(files)}"
    return f"{src.spec}|rev={src.revision or 'none'}"


def gguf_converted_dir(src: ModelSource) -> Path:
    """Cache folder of the transformers copy of a GGUF file (keyed by the file's sha256)."""
    assert src.path is not None and src.gguf_file
    digest = file_sha256(src.path / src.gguf_file)[:16]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", src.gguf_file)[:60]
    return home() / "models" / f"gguf-{digest}-{slug}"


def load_pretrained(
    auto_cls: Any, src: ModelSource, dtype: Any, device: str, device_map: str | None
) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, loading info) in eval mode; GGUF files are converted once and cached."""
    from transformers import AutoTokenizer

    kwargs: dict[str, Any] = {"dtype": dtype, "output_loading_info": True}
    if device_map:
        kwargs["device_map"] = device_map
    try:
        if src.gguf_file:
            conv = gguf_converted_dir(src)
            if (conv / "config.json").is_file():
                model, info = auto_cls.from_pretrained(conv, **kwargs)
                tok = AutoTokenizer.from_pretrained(conv)
            else:
                tok = AutoTokenizer.from_pretrained(src.path, gguf_file=src.gguf_file)
                model, info = auto_cls.from_pretrained(src.path, gguf_file=src.gguf_file, **kwargs)
                tmp = conv.with_name(conv.name + ".tmp")
                _forget_gguf_quantizer(model)  # the weights are already dequantized to `dtype`
                model.save_pretrained(tmp)
                tok.save_pretrained(tmp)
                if not conv.exists():
                    tmp.rename(conv)
        else:
            model, info = auto_cls.from_pretrained(src.load_name, revision=src.revision, **kwargs)
            tok = AutoTokenizer.from_pretrained(src.load_name, revision=src.revision)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise BackendError(f"cannot load model {src.spec!r}: {str(exc).splitlines()[0]}") from None
    if not device_map:
        model.to(device)
    model.eval()
    return model, tok, dict(info or {})


def _forget_gguf_quantizer(model: Any) -> None:
    """Let ``save_pretrained`` write a GGUF-loaded model: transformers dequantizes GGUF weights on
    load but keeps a (non-serialisable) quantizer marker."""
    for attr in ("hf_quantizer", "quantization_method"):
        if hasattr(model, attr):
            try:
                setattr(model, attr, None)
            except AttributeError:
                pass
    if hasattr(model, "is_quantized"):
        try:
            model.is_quantized = False
        except AttributeError:
            pass
    if hasattr(model.config, "quantization_config"):
        try:
            delattr(model.config, "quantization_config")
        except AttributeError:
            pass


# ---------------------------------------------------------------- batching


def token_budget_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indices grouped into batches, longest first, with batch size x max length <= budget.

    Sequences are sorted by length (descending, stable) so a batch pads little; a sequence
    longer than the budget forms a batch of its own.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    cur: list[int] = []
    width = 0
    for i in order:
        w = max(width, lengths[i])
        if cur and w * (len(cur) + 1) > budget:
            batches.append(cur)
            cur, w = [], lengths[i]
        cur.append(i)
        width = w
    if cur:
        batches.append(cur)
    return batches


def is_oom(exc: BaseException) -> bool:
    import torch

    if isinstance(exc, torch.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def run_halving(
    batch: list[T], fn: Callable[[list[T]], None], on_halve: Callable[[], None] | None = None
) -> None:
    """``fn(batch)``; on out-of-memory, free the cache and retry each half (down to size 1)."""
    try:
        fn(batch)
    except Exception as exc:  # noqa: BLE001
        if not is_oom(exc) or len(batch) == 1:
            if is_oom(exc):
                raise BackendError(
                    "out of memory on a single sequence; lower --batch-tokens or use "
                    "--device cpu / --dtype bfloat16"
                ) from None
            raise
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        if on_halve:
            on_halve()
        mid = len(batch) // 2
        run_halving(batch[:mid], fn, on_halve)
        run_halving(batch[mid:], fn, on_halve)


def input_device(model: Any) -> Any:
    """Device of the input embeddings (the first device under ``--device-map auto``)."""
    return model.get_input_embeddings().weight.device


class HFBackendBase(Backend):
    """Lazy loading, dispatch by request kind, right padding and token-budget batching.

    Subclasses set ``kind``, ``auto_class`` (name of the transformers Auto class) and
    ``handlers()`` (kind -> method(jobs, emit)).  The model loads on the first request, so a
    run answered entirely from the store never loads it.
    """

    auto_class: str = ""

    def __init__(self, target: str, options: HFOptions):
        super().__init__(target, options)
        self.source = locate(target, options.gguf, options.revision)
        self._fp = f"{self.kind}:{source_fingerprint(self.source)}|dtype={options.dtype}"
        self.model: Any = None
        self.tok: Any = None
        self.settings: dict[str, Any] = {}
        self.counters = {"forward_passes": 0, "sequences": 0, "oom_halvings": 0}

    @property
    def fingerprint(self) -> str:
        return self._fp

    def handlers(self) -> dict[str, Callable[[list[Job], Emit], None]]:
        raise NotImplementedError

    def after_load(self) -> None:
        """Checks and precomputation once the model is loaded."""

    def load(self) -> None:
        if self.model is not None:
            return
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
        self.after_load()

    def answer(self, jobs: Sequence[Job], emit: Emit) -> None:
        by_kind: dict[str, list[Job]] = {}
        for job in jobs:
            by_kind.setdefault(job.request.kind, []).append(job)
        handlers = self.handlers()
        for kind, group in by_kind.items():
            handler = handlers.get(kind)
            if handler is None:
                for job in group:
                    emit(job, Outcome(error=f"{self.kind} cannot answer {kind!r} requests"))
                continue
            self.load()
            handler(group, emit)

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
        """Call ``run`` on index batches packed under ``budget`` (default ``--batch-tokens``); halve on OOM."""
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

    def tokenize_jobs(self, jobs: list[Job], emit: Emit) -> None:
        """``tokenize`` {text, add_special_tokens} -> {tokens, continuation_prefix}."""
        try:
            prefix = getattr(self.tok.backend_tokenizer.model, "continuing_subword_prefix", None) or None
        except AttributeError:
            prefix = None
        for job in jobs:
            p = job.request.payload
            if p.get("add_special_tokens"):
                toks = self.tok.convert_ids_to_tokens(self.tok(p["text"])["input_ids"])
            else:
                toks = self.tok.tokenize(p["text"])
            emit(job, Outcome(response={"tokens": toks, "continuation_prefix": prefix}))

    def score_candidates(
        self, jobs: list[Job], emit: Emit, score_many: Callable[[list[str]], list[dict[str, Any]]]
    ) -> None:
        """``candidates`` {left, candidates, right} -> {loglik: {w: float}, n_scored: {w: int}}.

        Every ``left + w + right`` of the batch goes to ``score_many`` (log-likelihood or PLL) in one call.
        """
        texts = [
            j.request.payload["left"] + w + j.request.payload["right"]
            for j in jobs
            for w in j.request.payload["candidates"]
        ]
        res = iter(score_many(texts))
        for job in jobs:
            got = {w: next(res) for w in job.request.payload["candidates"]}
            response = {
                "loglik": {w: r["loglik"] for w, r in got.items()},
                "n_scored": {w: r["n_scored"] for w, r in got.items()},
            }
            emit(job, Outcome(response=response))
