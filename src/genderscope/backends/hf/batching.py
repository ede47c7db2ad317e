"""Packing sequences into batches under a token budget (batch size x padded length <= budget, longest
first) and halving a batch on out-of-memory."""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from genderscope.common.errors import BackendError

T = TypeVar("T")

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
