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


def hidden_states(model: Any, tok: Any, lines: list[tuple[str, int]], layer: int, max_len: int = 64) -> tuple[
    torch.Tensor, torch.Tensor
]:  # fmt: skip
    """(X: tokens × d hidden states at block ``layer``'s output, z: each token's line label)."""
    xs, zs = [], []
    model.eval()
    with torch.inference_mode():
        for text, label in lines:
            ids = tok(text, add_special_tokens=False, truncation=True, max_length=max_len)["input_ids"]
            if not ids:
                continue
            hs = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[layer + 1][0]
            xs.append(hs.float())
            zs.append(torch.full((hs.shape[0],), label))
    return torch.cat(xs), torch.cat(zs)


def fit(model: Any, tok: Any, lines: list[tuple[str, int]], layer: int) -> dict[str, Any]:
    """The LEACE eraser of block ``layer`` fitted on ``lines`` (what :data:`FILE` stores)."""
    from concept_erasure import LeaceEraser

    x, z = hidden_states(model, tok, lines, layer)
    # concept-erasure drops cross-covariance directions whose singular value is under ``svd_tol`` (0.01 by
    # default, an absolute number): scaled to the states' spread, so small-norm models are erased too
    eraser = LeaceEraser.fit(x, z.to(x.dtype), svd_tol=max(1e-8, 1e-3 * float(x.std())))
    return {"layer": layer, "proj_left": eraser.proj_left, "proj_right": eraser.proj_right,
            "bias": eraser.bias, "n_tokens": int(x.shape[0]), "n_lines": len(lines)}  # fmt: skip


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
