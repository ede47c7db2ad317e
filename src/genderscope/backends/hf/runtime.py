"""Runtime settings of the Hugging Face backends: options, device, dtype and torch CPU threads."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genderscope.common.errors import UsageError
from genderscope.core.options import opt

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
    batch_tokens: int = opt(
        4096, "token budget per forward pass: batch size x padded length", minimum=1, maximum=10**9
    )
    threads: int | None = opt(
        None,
        "torch CPU threads (default: env GENDERSCOPE_TORCH_THREADS, else all available cores; "
        "0 = the cores not kept busy by other processes)",
        maximum=4096,
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
