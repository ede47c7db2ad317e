"""Papers and code that several tasks (or commands) cite (model cards link them); one entry per source."""

from __future__ import annotations

from genderscope.core.metrics import Reference

WINOBIAS = Reference(
    "Zhao et al. (2018), Gender Bias in Coreference Resolution: Evaluation and Debiasing Methods (WinoBias)",
    "https://arxiv.org/abs/1804.06876",
)
GEST = Reference(
    "Pikuliak et al. (2024), Women Are Beautiful, Men Are Leaders: Gender "
    "Stereotypes in Machine Translation and Language Modeling (GEST)",
    "https://arxiv.org/abs/2311.18711",
)
GENDA_LENS = Reference(
    "GenDa Lens (DaDebias), Danish gender-bias tests",
    "https://github.com/DaDebias/genda-lens",
)
BORDIA_BOWMAN = Reference(
    "Bordia and Bowman (2019), Identifying and Reducing Gender Bias in Word-Level Language Models",
    "https://arxiv.org/abs/1904.03035",
)
