"""genderscope's development rig: tests, benchmarks and ``.ci/run`` import it; the wheel does not ship it.

It lives in ``devtools/`` beside ``src/``: pytest puts that folder on ``sys.path`` (``pythonpath`` in
pyproject.toml); scripts add it themselves (``PYTHONPATH=src:devtools``, or :data:`DEVTOOLS` in a child's
environment).  Nothing under ``src/genderscope`` imports it (``tests/project/test_dev_rig.py``).

* :mod:`genderscope_dev.fake_openai`: a local OpenAI-compatible server with scripted faults (chat,
  completions with echoed prompt log-probs, Files and Batches); :mod:`genderscope_dev.answer_rules` its
  deterministic chat answers.
* :mod:`genderscope_dev.engines`: real inference servers (vLLM, llama-cpp-python) in their own venvs.
* :mod:`genderscope_dev.genderbench_venv`: GenderBench 1.1.0 in its own venv, the reference harness.
* :mod:`genderscope_dev.ray_cluster`, :mod:`genderscope_dev.drive`, :mod:`genderscope_dev.import_graph`.

The tiny random-initialised models the demo uses ship in the package: :mod:`genderscope.demo_models`.
"""

from __future__ import annotations

import os
from pathlib import Path

#: the folder that holds this package (``devtools/``): put it on a child process's PYTHONPATH
DEVTOOLS = str(Path(__file__).resolve().parent.parent)


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with :data:`DEVTOOLS` first on PYTHONPATH, so a
    child started as ``python -m genderscope_dev.…`` finds this package."""
    env = dict(os.environ if env is None else env)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != DEVTOOLS]
    env["PYTHONPATH"] = os.pathsep.join([DEVTOOLS, *rest])
    return env
