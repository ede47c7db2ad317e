"""HateSonar (PyPI ``hatesonar`` 0.1.0, MIT): a hate speech / offensive language / neither classifier.

The model is HateSonar's own ONNX file (TF-IDF of lower-cased ``[a-zA-Z0-9_]+`` tokens and a logistic
regression, trained on the tweets of Davidson et al. 2017, "Automated Hate Speech Detection and the
Problem of Offensive Language").  It is a hate/offensive-language classifier of English tweets, not a
general toxicity model: it reads vocabulary, not meaning (quoting or negating a slur still scores
offensive; polite hostility scores "neither").

The model file is run here with onnxruntime directly.  By default one text per call, as HateSonar's
``Sonar.ping`` does, which gives its probabilities bit for bit; ``batch=N`` runs N texts per call, a
little faster, with float32 rounding differences (at most about 1.2e-7) from the model's dense
batched arithmetic.  Its ``StringNormalizer`` needs the ``en_US.UTF-8`` C++ locale; on a system without it
``Sonar()`` itself fails, and this scorer sets the node's locale to ``C.UTF-8`` instead
(:mod:`genderscope.scorers.onnx_locale`), recorded in ``options()["locale"]``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genderscope.scorers.base import MissingExtra, Scorer, ScorerInfo, as_metrics, ratio, require

CLASSES = ("hate", "offensive", "neither")  # the model's labels 0, 1, 2 (HateSonar: hate_speech, ...)
DEFAULT_LOCALE = "en_US.UTF-8"  # onnxruntime's StringNormalizer default on Linux
FALLBACK_LOCALES = ("C.UTF-8", "C.utf8")
BATCH = 1  # texts per onnxruntime call: 1 gives bit for bit the probabilities of HateSonar's own ping()


def model_path(scorer: str = "hate") -> Path:
    """HateSonar's shipped ``model/model.onnx`` (found without importing the package)."""
    try:
        spec = importlib.util.find_spec("hatesonar")
    except (ImportError, ValueError):  # ValueError: blocked in sys.modules
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra(scorer, "hatesonar", "generation")
    path = Path(list(spec.submodule_search_locations)[0]) / "model" / "model.onnx"
    if not path.is_file():
        raise MissingExtra(scorer, "hatesonar", "generation")
    return path


def open_session(path: Path, scorer: str = "hate") -> tuple[Any, str]:
    """An onnxruntime session of the model at ``path`` and the locale its lower-casing runs under."""
    ort = require("onnxruntime", scorer)
    from genderscope.scorers.onnx_locale import with_locale

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 4  # the locale failure below is expected on many systems: no log line
    model = path.read_bytes()
    try:
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"]), DEFAULT_LOCALE
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own Fail type
        if "locale" not in str(exc).lower():
            raise
        first = exc
    for locale in FALLBACK_LOCALES:
        try:
            session = ort.InferenceSession(
                with_locale(model, locale), options, providers=["CPUExecutionProvider"]
            )
        except Exception:  # noqa: BLE001
            continue
        return session, locale
    from genderscope.common.errors import GenderscopeError

    raise GenderscopeError(
        f"scorer {scorer!r}: onnxruntime cannot lower-case text under {DEFAULT_LOCALE} nor "
        f"{' / '.join(FALLBACK_LOCALES)} ({str(first).splitlines()[0][:160]}); install a UTF-8 locale"
    )


class HateScorer(Scorer):
    """HateSonar's class probabilities and top class (hate speech / offensive language / neither)."""

    info = ScorerInfo(
        "hate",
        "1",
        "MIT (HateSonar 0.1.0's model, trained on Davidson et al. 2017's tweets)",
        "HateSonar hate speech / offensive language / neither classifier (a tweet-trained TF-IDF "
        "logistic regression; not a toxicity model)",
        "generation",
    )
    fields = ("n", "p_hate", "p_offensive", "p_neither", "top_hate", "top_offensive", "top_neither")
    metric_docs = {
        "share_hate": "share of generations whose top class is hate speech, in [0, 1]",
        "share_offensive": "share of generations whose top class is offensive language, in [0, 1]",
        "share_hate_or_offensive": "share of generations whose top class is hate or offensive, in [0, 1]",
        "mean_p_hate": "mean probability of hate speech, in [0, 1]",
        "mean_p_offensive": "mean probability of offensive language, in [0, 1]",
    }

    def __init__(self, batch: int = BATCH):
        self.path = model_path(self.info.name)
        self.session, self.locale = open_session(self.path, self.info.name)
        self.batch = max(1, int(batch))

    def options(self) -> dict[str, Any]:
        return {"locale": self.locale}

    def package_version(self) -> str | None:
        from importlib import metadata

        return f"hatesonar=={metadata.version('hatesonar')}; onnxruntime=={metadata.version('onnxruntime')}"

    def predict(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(top class index per text, class probabilities ``(n, 3)`` as the model gives them, float32)."""
        labels = np.zeros(len(texts), dtype=np.int64)
        probs = np.zeros((len(texts), len(CLASSES)), dtype=np.float32)
        for start in range(0, len(texts), self.batch):
            chunk = np.array(list(texts[start : start + self.batch]), dtype=object)
            label, prob = self.session.run(None, {"text": chunk})
            labels[start : start + len(chunk)] = label
            probs[start : start + len(chunk)] = [[p[k] for k in range(len(CLASSES))] for p in prob]
        return labels, probs

    def score(self, texts: Sequence[str]) -> np.ndarray:
        labels, probs = self.predict(texts)
        top = np.eye(len(CLASSES))[labels] if len(texts) else np.zeros((0, len(CLASSES)))
        return np.column_stack([np.ones(len(texts)), probs.astype(np.float64), top])

    def metrics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        s = np.asarray(sums, dtype=np.float64)
        n = s[..., 0]
        return as_metrics(
            {
                "share_hate": ratio(s[..., 4], n),
                "share_offensive": ratio(s[..., 5], n),
                "share_hate_or_offensive": ratio(s[..., 4] + s[..., 5], n),
                "mean_p_hate": ratio(s[..., 1], n),
                "mean_p_offensive": ratio(s[..., 2], n),
            }
        )
