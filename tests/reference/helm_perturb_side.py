"""Runs INSIDE the reference venv (crfm-helm installed): HELM's own GenderPerturbation on prompts.

stdin: {"texts": [...], "runs": [[mode, source_class, target_class], ...]}; stdout: {"version": ...,
"out": {"mode:source:target": [perturbed text, ...]}}. prob=1.0, so HELM's swap is deterministic (its rng,
``Random(instance id)``, is drawn from but every draw is below 1.0).
"""

import json
import sys
from importlib.metadata import version
from random import Random

from helm.benchmark.augmentations.gender_perturbation import GenderPerturbation


def main() -> None:
    req = json.load(sys.stdin)
    out = {}
    for mode, source, target in req["runs"]:
        pert = GenderPerturbation(mode=mode, prob=1.0, source_class=source, target_class=target)
        out[f"{mode}:{source}:{target}"] = [pert.perturb(t, Random(i)) for i, t in enumerate(req["texts"])]
    json.dump({"version": version("crfm-helm"), "out": out}, sys.stdout)


if __name__ == "__main__":
    main()
