"""LEACE (Belrose et al. 2023, EleutherAI's ``concept-erasure``): linear erasure of gender from one layer's
hidden states, saved with the model and applied in its forward pass.

Fitting data: every training line with gendered words of the pair list, labelled by the gender of its
pair words (male 0, female 1; lines with both or neither left out), and its counterfactual copy with the
other label (:mod:`.cda`), so the two classes differ only in the swapped words.  X = the hidden states of
every token of those lines at the output of transformer block ``layer``; z = the line's label.  The eraser
x ↦ x − P(x − μ) (``LeaceEraser``: P of rank 1 for two classes) leaves no linear predictor of z better
than a constant on X's distribution.

Saved as ``leace.pt`` beside the model's weights: {layer, proj_left, proj_right, bias}.  The Hugging Face
backends load it with the model (:func:`attach`) and apply it to that block's output on every forward
pass, so every task and backend route that loads the folder measures the erased model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import torch

FILE = "leace.pt"


def blocks(model: Any) -> Any:
    """The model's transformer blocks: its longest ``torch.nn.ModuleList`` (GPT-2 ``h``, Llama ``layers``,
    BERT ``layer``)."""
    lists = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList)]
    if not lists:
        raise ValueError("the model has no list of transformer blocks to attach LEACE to")
    return max(lists, key=len)


def labelled_lines(texts: Sequence[str], pairs: Sequence[tuple[str, str]]) -> list[tuple[str, int]]:
    """(line, label) for lines whose pair words are all of one gender, each with its swapped copy."""
    import re

    from genderscope.debias.cda import swap_gender, swap_table

    male, female = {m.lower() for m, _ in pairs}, {f.lower() for _, f in pairs}
    table = swap_table(pairs)
    out = []
    for t in texts:
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", t)}
        is_m, is_f = bool(words & (male - female)), bool(words & (female - male))
        if is_m != is_f:
            label = int(is_f)
            out += [(t, label), (swap_gender(t, table), 1 - label)]
    return out


class _Stop(Exception):
    """Raised by the capture hook once block ``layer`` has run: the later blocks and the head are skipped."""


def _token_ids(tok: Any, lines: list[tuple[str, int]], max_len: int) -> list[tuple[list[int], int]]:
    """(token ids, label) of each line, truncated to ``max_len`` tokens; empty lines left out."""
    out = []
    for text, label in lines:
        ids = tok(text, add_special_tokens=False, truncation=True, max_length=max_len)["input_ids"]
        if ids:
            out.append((ids, label))
    return out


def block_states(model: Any, batch: list[list[int]], layer: int, pad_id: int = 0) -> torch.Tensor:
    """Block ``layer``'s output for a batch of token-id lists, right-padded with an attention mask (batch ×
    longest × d); only the blocks up to ``layer`` run (a hook stops the forward pass there)."""
    width = max(len(ids) for ids in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, ids in enumerate(batch):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        mask[i, : len(ids)] = 1
    got: list[torch.Tensor] = []

    def capture(_module: Any, _inputs: Any, output: Any) -> None:
        got.append(output[0] if isinstance(output, tuple) else output)
        raise _Stop

    handle = blocks(model)[layer].register_forward_hook(capture)
    try:
        model(input_ids=input_ids, attention_mask=mask)
    except _Stop:
        pass
    finally:
        handle.remove()
    return got[0]


def hidden_states(
    model: Any, tok: Any, lines: list[tuple[str, int]], layer: int, max_len: int = 64, batch_size: int = 16
) -> tuple[torch.Tensor, torch.Tensor]:
    """(X: tokens × d hidden states at block ``layer``'s output, z: each token's line label), in line
    order.  Lines run in batches of similar length (right padding, attention mask; pad positions dropped)
    and only up to block ``layer``: the same states as one line at a time, up to float rounding."""
    items = _token_ids(tok, lines, max_len)
    order = sorted(range(len(items)), key=lambda i: len(items[i][0]))
    states: list[torch.Tensor | None] = [None] * len(items)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            hs = block_states(model, [items[i][0] for i in chunk], layer, pad)
            for row, i in enumerate(chunk):
                states[i] = hs[row, : len(items[i][0])].float()
    xs = [h for h in states if h is not None]
    zs = [torch.full((len(ids),), label) for ids, label in items]
    return torch.cat(xs), torch.cat(zs)


def fit(model: Any, tok: Any, lines: list[tuple[str, int]], layer: int) -> dict[str, Any]:
    """The LEACE eraser of block ``layer`` fitted on ``lines`` (what :data:`FILE` stores)."""

    x, z = hidden_states(model, tok, lines, layer)
    eraser = fit_eraser(x, z)
    return {"layer": layer, "proj_left": eraser["proj_left"], "proj_right": eraser["proj_right"],
            "bias": eraser["bias"], "n_tokens": int(x.shape[0]), "n_lines": len(lines)}  # fmt: skip


def fit_eraser(x: torch.Tensor, z: torch.Tensor) -> dict[str, torch.Tensor]:
    """LeaceEraser on states ``x`` and labels ``z``, fitted in float64, returned in ``x``'s dtype.

    Float64: SmolLM2's middle states mix a few dimensions of size ~10⁴ with ordinary ones of ~1, so float32
    covariances lose the ordinary directions (eigh's pinv threshold is relative to the largest eigenvalue).
    ``svd_tol`` bounds the singular values of the *whitened* cross-covariance, which lie in [0, std z]
    whatever the scale of x: a tolerance scaled to x's spread (as before) exceeded std z on SmolLM2 and
    left an eraser of rank 0. It is now 10⁻³ · std z (numerical noise only)."""
    from concept_erasure import LeaceEraser

    zz = z.to(torch.float64)
    eraser = LeaceEraser.fit(x.to(torch.float64), zz, svd_tol=max(1e-12, 1e-3 * float(zz.std())))
    return {"proj_left": eraser.proj_left.to(x.dtype), "proj_right": eraser.proj_right.to(x.dtype),
            "bias": eraser.bias.to(x.dtype) if eraser.bias is not None else None}  # fmt: skip


def erase(x: torch.Tensor, state: dict[str, Any]) -> torch.Tensor:
    """x − ((x − μ) Rᴴ) Lᴴ: LEACE's erasure (``LeaceEraser.__call__``)."""
    delta = x - state["bias"] if state["bias"] is not None else x
    return x - (delta @ state["proj_right"].mH.to(x.dtype)) @ state["proj_left"].mH.to(x.dtype)


def attach(model: Any, folder: Path) -> dict[str, Any] | None:
    """Apply ``folder/leace.pt`` (when present) to its block's output on every forward pass; returns what
    was attached (None: no eraser)."""
    path = Path(folder) / FILE
    if not path.is_file():
        return None
    state = torch.load(path, weights_only=False)
    block = blocks(model)[state["layer"]]

    def hook(_module: Any, _inputs: Any, output: Any) -> Any:
        if isinstance(output, tuple):
            return (erase(output[0], state),) + tuple(output[1:])
        return erase(output, state)

    block.register_forward_hook(hook)
    return {"layer": state["layer"], "file": FILE, "n_tokens": state.get("n_tokens")}
