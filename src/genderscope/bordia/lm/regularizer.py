"""The debiasing regulariser L_B = λ · ‖Ê[N] B‖²_F (spec §6).

Ê = embedding rows divided by their L2 norm (clamped at 1e-12); C = stack of (Ê[u_i] − Ê[v_i]) / 2 over
the defining pairs (both words in the dictionary, duplicates kept); C = U diag(s) Vᵀ; B = the first κ
right singular vectors; N = every dictionary word that is not a listed gender word. The sum runs over
all rows of N (not a mean). κ: ``variance`` (smallest k whose cumulative share s_i²/Σs_j² reaches τ),
``reference`` (κ = 1, what the authors' code effectively used) or a fixed integer.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from genderscope.bordia.pairs import GenderPairs
from genderscope.common.errors import UsageError


def choose_kappa(
    singular_values: Sequence[float] | np.ndarray, rule: str | int = "variance", var_ratio: float = 0.5
) -> int:
    """κ from the singular values: ``variance`` (cumulative explained variance ≥ τ − 1e-12), ``reference`` (1)
    or an integer (clipped to the number of singular values)."""
    s = np.asarray(singular_values, dtype=np.float64)
    if s.size == 0:
        raise UsageError("the gender subspace needs at least one defining pair")
    if rule == "reference":
        return 1
    if isinstance(rule, int) or (isinstance(rule, str) and rule.isdigit()):
        k = int(rule)
        if k < 1:
            raise UsageError(f"kappa must be ≥ 1, got {k}")
        return min(k, s.size)
    if rule != "variance":
        raise UsageError(f"kappa must be 'variance', 'reference' or an integer, got {rule!r}")
    energy = s**2
    total = energy.sum()
    if total <= 0:
        return 1
    cum = np.cumsum(energy / total)
    return int(np.argmax(cum >= var_ratio - 1e-12)) + 1 if (cum >= var_ratio - 1e-12).any() else int(s.size)


class BiasRegularizer:
    """Computes λ‖Ê[N]B‖²_F for an embedding matrix, given the LM dictionary and the gender pairs."""

    def __init__(
        self,
        vocab: Sequence[str],
        pairs: GenderPairs,
        lam: float,
        kappa: str | int = "variance",
        var_ratio: float = 0.5,
        normalize: bool = True,
        detach_subspace: bool = False,
    ):
        index = {w: i for i, w in enumerate(vocab)}
        defining = [(index[m], index[f]) for m, f in pairs.pairs if m in index and f in index]
        if not defining:
            raise UsageError(f"none of the gender pairs of {pairs.name} has both words in the LM vocabulary")
        gendered = pairs.gendered
        neutral = [i for i, w in enumerate(vocab) if w not in gendered]
        self._setup(defining, neutral, lam, kappa, var_ratio, normalize, detach_subspace)

    @classmethod
    def from_ids(
        cls,
        defining: Sequence[tuple[int, int]],
        neutral: Sequence[int],
        lam: float,
        kappa: str | int = "variance",
        var_ratio: float = 0.5,
        normalize: bool = True,
        detach_subspace: bool = False,
    ) -> "BiasRegularizer":
        """The regulariser over rows given by index: ``defining`` (male row, female row) pairs and the
        ``neutral`` rows N (e.g. a transformer's single-token words, :mod:`genderscope.debias`)."""
        if not defining:
            raise UsageError("the gender subspace needs at least one defining pair")
        obj = cls.__new__(cls)
        obj._setup(defining, neutral, lam, kappa, var_ratio, normalize, detach_subspace)
        return obj

    def _setup(
        self,
        defining: Sequence[tuple[int, int]],
        neutral: Sequence[int],
        lam: float,
        kappa: str | int,
        var_ratio: float,
        normalize: bool,
        detach_subspace: bool,
    ) -> None:
        self.pair_u = torch.tensor([u for u, _ in defining], dtype=torch.long)
        self.pair_v = torch.tensor([v for _, v in defining], dtype=torch.long)
        self.neutral = torch.tensor(list(neutral), dtype=torch.long)
        self.n_defining = len(defining)
        self.lam = float(lam)
        self.kappa_rule = kappa
        self.var_ratio = var_ratio
        self.normalize = normalize
        self.detach_subspace = detach_subspace
        self.last_kappa = 0

    def to(self, device: torch.device | str) -> "BiasRegularizer":
        self.pair_u, self.pair_v, self.neutral = (
            t.to(device) for t in (self.pair_u, self.pair_v, self.neutral)
        )
        return self

    def subspace(self, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
        """(Ê, B (d × κ), κ) for the current weights."""
        if self.normalize:
            e_hat = weight / weight.norm(dim=1, keepdim=True).clamp_min(1e-12)
        else:
            e_hat = weight
        C = (e_hat[self.pair_u] - e_hat[self.pair_v]) / 2
        if self.detach_subspace:
            C = C.detach()
        _, s, vh = torch.linalg.svd(C, full_matrices=False)
        kappa = choose_kappa(s.detach().double().cpu().numpy(), self.kappa_rule, self.var_ratio)
        return e_hat, vh[:kappa].T, kappa

    def projection(self, weight: torch.Tensor) -> torch.Tensor:
        """‖Ê[N] B‖²_F (without λ)."""
        e_hat, B, kappa = self.subspace(weight)
        self.last_kappa = kappa
        return (e_hat[self.neutral] @ B).pow(2).sum()

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        """λ · ‖Ê[N] B‖²_F."""
        return self.lam * self.projection(weight)


def check_finite(value: torch.Tensor, step: int) -> None:
    """Stop with a clear error on a non-finite regulariser (unstable SVD backward)."""
    if not math.isfinite(float(value.detach())):
        raise FloatingPointError(
            f"non-finite loss at step {step}: the SVD backward of the debiasing regulariser "
            "is unstable when singular values (nearly) coincide; retry with "
            "--detach-subspace"
        )
