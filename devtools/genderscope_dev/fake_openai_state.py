"""The fake OpenAI server's state: config, counters (``/_stats``), the capacity queue of the
per-server concurrency cap, and the lazily loaded completions model."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter, deque
from pathlib import Path
from typing import Any, Callable

from genderscope_dev.fake_openai_config import FakeConfig


class _State:
    """Config, counters, the capacity queue and the model, owned by the server's event loop thread."""

    def __init__(self, config: FakeConfig):
        self.config = config
        self.rng = random.Random(config.seed)
        self._model: Any = None
        self.slots_used = 0
        self.waiting: deque[Callable[[], None]] = deque()
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.answered = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.with_seed = 0
        self.with_auth = 0
        self.rejected = 0  # refused with 429 by the concurrency cap (over_capacity = "429")
        self.max_waiting = 0
        self.by_prompt: Counter[str] = Counter()  # requests per prompt (chat: last message)
        self.answered_by_prompt: Counter[str] = Counter()  # real answers sent, per prompt
        self.by_endpoint: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.last_body: Any = None
        from genderscope_dev.fake_openai_batch import FakeBatches

        self.batches = FakeBatches()
        self.rng = random.Random(self.config.seed)
        if self._model is not None:
            self._model.forwards = 0

    def model(self) -> Any:
        """The completions model of ``config.model_dir`` (loaded on first use), or None."""
        cfg = self.config
        if not cfg.model_dir:
            return None
        if self._model is None or self._model.dir != str(Path(cfg.model_dir)):
            from genderscope_dev.fake_openai_model import EchoModel

            self._model = EchoModel(cfg.model_dir, cfg.batch_tokens, cfg.torch_threads)
        self._model.batch_tokens = cfg.batch_tokens
        return self._model

    def acquire(self, start: Callable[[], None]) -> bool:
        """Run ``start`` now if a slot is free, else queue it (FIFO); False = refuse (cap + "429")."""
        cap = self.config.max_concurrency
        if cap <= 0 or self.slots_used < cap:
            self.slots_used += 1
            start()
            return True
        if self.config.over_capacity == "429":
            self.rejected += 1
            return False
        self.waiting.append(start)
        self.max_waiting = max(self.max_waiting, len(self.waiting))
        return True

    def release(self) -> None:
        self.slots_used -= 1
        cap = self.config.max_concurrency
        while self.waiting and (cap <= 0 or self.slots_used < cap):
            self.slots_used += 1
            self.waiting.popleft()()

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "answered": self.answered,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "with_seed": self.with_seed,
            "with_auth": self.with_auth,
            "rejected": self.rejected,
            "waiting": len(self.waiting),
            "max_waiting": self.max_waiting,
            "forwards": self._model.forwards if self._model is not None else 0,
            "faults": dict(self.faults),
            "by_prompt": dict(self.by_prompt),
            "answered_by_prompt": dict(self.answered_by_prompt),
            "by_endpoint": dict(self.by_endpoint),
            "last_body": self.last_body,
            "batch": self.batches.snapshot(),
            "config": dataclasses.asdict(self.config),
        }
