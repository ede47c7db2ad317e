"""The cyclic collector around model loading: what ``load`` leaves alive goes to the collector's oldest
generation without a pass over it (nothing stays frozen outside a run), and inside a run it is frozen with
the run's attempts and released with them."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from genderscope.core.runner import frozen_gc


@pytest.fixture(scope="module")
def causal_path(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    from genderscope.demo_models import build_tiny_causal

    return build_tiny_causal(tmp_path_factory.mktemp("causal"), ["he", "she", "the", "nurse", "."], seed=3)


def _backend(path: Path):
    from genderscope.core import lookup
    from genderscope.core.options import build_options

    cls = lookup.backend_class(f"hf-causal:{path}")
    return cls(str(path), build_options(cls.Options, {}, "hf-causal"))


class _Cycle:
    """Cyclic garbage with a finalizer (the kind only the collector reclaims)."""

    finalized = 0

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        type(self).finalized += 1


def test_load_settles_its_objects_unfrozen_and_leaves_garbage_collectable(causal_path: Path) -> None:
    gc.unfreeze()
    _Cycle.finalized = 0
    _Cycle()  # garbage already, not yet collected
    backend = _backend(causal_path)
    try:
        backend.load()
        assert gc.isenabled()
        assert gc.get_freeze_count() == 0  # nothing of the host's stays out of the collector
        assert gc.get_count()[0] < gc.get_threshold()[0]  # no young generation of the load's objects to walk
        gc.collect()
        assert _Cycle.finalized == 1
    finally:
        backend.close()


def test_inside_a_run_the_load_is_frozen_with_the_attempts_and_released_after(causal_path: Path) -> None:
    gc.unfreeze()
    backend = _backend(causal_path)
    try:
        with frozen_gc():
            backend.load()
            assert gc.isenabled() and gc.get_freeze_count() > 0
        assert gc.get_freeze_count() == 0
    finally:
        backend.close()
