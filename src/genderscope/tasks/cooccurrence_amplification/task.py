"""Task ``cooccurrence-amplification``: gender co-occurrence bias of a model's generated text and how much
the model amplifies its reference corpus's bias (Bordia & Bowman 2019, §3-§5 of spec ``bordia_bowman.md``).

Attempts: one per sample, a prefix of the reference corpus continued by the model (``generate``: plain
continuation with the sample's own seed; ``chat``: asked to continue the text, answer parsed). Scoring
(:mod:`.scoring`): the continuations are tokenised like the corpus (:mod:`.normalise`), their per-word
bias is regressed on the bias corpus's (β); the corpus's own continuations of the same prefixes are the
baseline row ``reference`` (β ≈ 1 when the corpus is large enough for its bias to be estimated well).
"""

from __future__ import annotations

import dataclasses
import math
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

from genderscope.bordia.bias import ScoreOptions
from genderscope.bordia.pairs import GenderPairs, load_gender_pairs
from genderscope.bordia.scoring import ContextScore, context_configs, score_documents
from genderscope.bordia.text import Document, read_corpus, registry_corpus_file, resolve_corpus_paths
from genderscope.core.primitives import CHAT, GENERATE, ChatReply, chat_request, generate_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.request_value import Request
from genderscope.core.metrics import Measurement, Metric
from genderscope.core.task import Task, TaskResult
from genderscope.core.evidence import ReportFacts
from genderscope.tasks.cooccurrence_amplification.glossary import METRIC_DOCS
from genderscope.tasks.cooccurrence_amplification.normalise import Normaliser, resolve_style, vocabulary
from genderscope.tasks.cooccurrence_amplification.options import CooccurrenceOptions
from genderscope.tasks.cooccurrence_amplification.prefixes import (
    Prefix,
    chat_prompt,
    parse_chat_continuation,
    sample_prefixes,
)
from genderscope.tasks.cooccurrence_amplification.scoring import (
    TextScore,
    amplify,
    scatter_points,
    score_texts,
)
from genderscope.tasks.references import BORDIA_BOWMAN

DEFAULT_MAX_TOKENS = 100
NO_BETA = "β undefined: fewer than 3 words scored in both texts, or no variance in the corpus bias"
COUNT = "an exact count"


class CooccurrenceAmplificationTask(Task):
    limit_meaning = 'at most N generated samples (the --samples option caps it too)'
    name = "cooccurrence-amplification"
    description = (
        "gender co-occurrence bias of generated text and its amplification β against a reference corpus "
        "(Bordia & Bowman 2019, for any generating model)"
    )
    Options = CooccurrenceOptions
    measurements = {
        "generate": Measurement(frozenset({GENERATE}), "plain continuation of corpus prefixes"),
        "chat": Measurement(frozenset({CHAT}), "asked to continue corpus prefixes (chat)"),
    }
    metric_docs = METRIC_DOCS
    report_facts = ReportFacts(evidence=("metrics.fixed.n_scored",), evidence_unit="scored words")
    references = (BORDIA_BOWMAN,)

    def __init__(self, options: CooccurrenceOptions, ctx: Any):
        from genderscope.bordia.inputs import default_pairs

        bias_corpus = options.bias_corpus or options.corpus
        for spec in dict.fromkeys((options.corpus, bias_corpus)):
            if registry_corpus_file(spec) is None and not Path(spec).exists():
                # before the pair list is inferred, which would otherwise ask for --pairs first
                resolve_corpus_paths([spec])  # raises: no such file or directory (registry corpora: ...)
        pairs = options.pairs or (stats_pairs(options.bias_stats) if options.bias_stats else None)
        pairs = default_pairs([bias_corpus], pairs)
        options = dataclasses.replace(
            options,
            bias_corpus=bias_corpus,
            pairs=pairs,
            normalise=resolve_style(options.normalise, bias_corpus),
        )
        options.count_config()  # validate early
        super().__init__(options, ctx)
        self.measurement = self.chosen_measurement() or "generate"

    # -- settings -------------------------------------------------------------------------------------
    @property
    def max_tokens(self) -> int:
        return int(self.ctx.generation.get("max_tokens", DEFAULT_MAX_TOKENS))

    @property
    def temperature(self) -> float:
        return float(self.ctx.generation.get("temperature", 1.0))

    @property
    def n_samples(self) -> int:
        n = self.options.samples
        return n if self.ctx.limit is None else max(1, min(n, int(self.ctx.limit)))

    def datasets(self) -> list[str]:
        from genderscope.bordia.pairs import PAIR_FILES, STOPWORDS_FILE

        o = self.options
        names = [registry_corpus_file(c) for c in {o.corpus, o.bias_corpus} if not _is_path(c)]
        names += [PAIR_FILES[o.pairs]] if o.pairs in PAIR_FILES else []
        names += [STOPWORDS_FILE] if o.stopwords == "nltk" else []
        return sorted(n for n in names if n)

    @cached_property
    def score_options(self) -> ScoreOptions:
        return dataclasses.replace(self.options.score_options(), seed=self.options.bootstrap_seed)

    @cached_property
    def pairs(self) -> GenderPairs:
        return load_gender_pairs(self.options.pairs, self.options.fix_wife_husband)

    # -- attempts -------------------------------------------------------------------------------------
    def prefixes(self) -> list[Prefix]:
        o = self.options
        docs = read_corpus([o.corpus])
        return sample_prefixes(
            docs, self.n_samples, o.prefix_tokens, self.max_tokens, self.ctx.seeds.items, o.prefix_start
        )

    def request(self, p: Prefix) -> Request:
        o = self.options
        if self.measurement == "chat":
            prompt = chat_prompt(p.prompt, self.max_tokens)
            return chat_request(prompt, temperature=self.temperature, max_tokens=2 * self.max_tokens)
        return generate_request(
            p.prompt,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            top_p=o.top_p,
            seed=self.ctx.seeds.generation + p.index,
            hints={"corpus": o.corpus},
        )

    def attempts(self) -> list[Attempt]:
        label = self.options.corpus
        return [
            Attempt(
                f"{label}/{p.index:05d}",
                1,
                self.request(p),
                {"sample": p.index, "prompt": p.prompt, "reference": p.reference},
            )
            for p in self.prefixes()
        ]

    # -- scoring --------------------------------------------------------------------------------------
    def continuation(self, r: AttemptResult) -> str | None:
        """The generated continuation of one attempt (None when it failed)."""
        if not r.ok:
            return None
        answer = r.answer()
        if isinstance(answer, ChatReply):
            return parse_chat_continuation(answer.text, r.attempt.meta["prompt"])
        return answer.text

    def corpus_docs(self) -> list[Document]:
        return read_corpus([self.options.bias_corpus])

    def corpus_statistics(self) -> dict[str, ContextScore]:
        """Scores of the ``--bias-stats`` audit's counts under this run's scoring options."""
        from genderscope.bordia.bias import bias_scores
        from genderscope.bordia.corpus_stats import load_corpus_counts

        o = self.options
        configs = context_configs(o.count_config(), o.context)
        counts = load_corpus_counts(Path(str(o.bias_stats)), configs, self.pairs)
        return {ctx: ContextScore(c, bias_scores(c, self.score_options)) for ctx, c in counts.items()}

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        texts = [self.continuation(r) for r in results]
        used = [i for i, t in enumerate(texts) if t is not None]
        stats = self.corpus_statistics() if o.bias_stats else None
        scored = score_all(
            [texts[i] or "" for i in used],
            [results[i].attempt.meta["reference"] for i in used],
            [] if stats else self.corpus_docs(),
            self.pairs,
            o,
            self.score_options,
            corpus_scores=stats,
        )
        records = [
            {"sample": r.attempt.meta["sample"], "words": None if t is None else len(t.split())}
            for r, t in zip(results, texts)
        ]
        return build_result(scored, o, n_attempts=len(results), n_used=len(used), records=records)


def stats_pairs(folder: str) -> str | None:
    """The pair list (``penn``, ``wiki``, ``dm`` or a file) an audit folder was counted with."""
    import json

    from genderscope.bordia.corpus_stats import STATS_FILE

    path = Path(folder) / STATS_FILE
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8")).get("pairs", {}).get("pairs_file")


def _is_path(spec: str) -> bool:
    from pathlib import Path

    return Path(spec).exists() or registry_corpus_file(spec) is None


@dataclasses.dataclass
class Scored:
    """The scored texts: ``generated``, ``reference`` (corpus continuations), ``corpus`` (bias corpus)."""

    generated: TextScore
    reference: TextScore
    corpus: TextScore
    normaliser: Normaliser


def score_all(
    generated: Sequence[str],
    reference: Sequence[str],
    corpus_docs: Sequence[Document],
    pairs: GenderPairs,
    options: CooccurrenceOptions,
    score_options: ScoreOptions,
    corpus_scores: dict[str, ContextScore] | None = None,
) -> Scored:
    """Score the generated texts and the reference continuations against the corpus (whose scores are
    computed with bordia's ``score_documents`` unless given)."""
    configs = context_configs(options.count_config(), options.context)
    corpus = corpus_scores or score_documents(corpus_docs, pairs, configs, score_options)
    if corpus_docs:
        vocab = vocabulary(d.text for d in corpus_docs)
    else:  # corpus statistics (an audit): its word types
        vocab = frozenset(next(iter(corpus.values())).counts.types)
    norm = Normaliser(options.normalise, vocab)
    outliers = None if options.outliers == "none" else options.outliers
    args = (corpus, outliers, score_options.bootstrap, score_options.seed)
    gen = amplify(
        "generated", score_texts(generated, norm, pairs, configs, score_options), *args, len(generated)
    )
    ref = amplify(
        "reference", score_texts(reference, norm, pairs, configs, score_options), *args, len(reference)
    )
    n_docs = len(corpus_docs) or next(iter(corpus.values())).counts.n_documents
    return Scored(gen, ref, TextScore("corpus", corpus, {}, n_docs), norm)


def _metric(value: Any, ci: tuple[Any, Any] | None, why: str) -> Metric:
    def bad(x: Any) -> bool:
        return x is None or (isinstance(x, float) and math.isnan(x))

    if ci is None or bad(ci[0]) or bad(ci[1]):
        return Metric(value, no_ci=why)
    return Metric(value, ci[0], ci[1])


def build_result(
    scored: Scored, options: CooccurrenceOptions, n_attempts: int, n_used: int, records: list[dict[str, Any]]
) -> TaskResult:
    """Metrics, rows, scatter points and settings of one scored run."""
    from genderscope.bordia.bias import bootstrap_why_not

    metrics: dict[str, Metric] = {}
    rows: list[dict[str, Any]] = []
    scatter: dict[str, Any] = {}
    for ctx in scored.generated.scores:
        for ts, prefix in (
            (scored.generated, ""),
            (scored.reference, "reference."),
            (scored.corpus, "corpus."),
        ):
            row = ts.row(ctx)
            rows.append(row)
            why = bootstrap_why_not(ts.scores[ctx].bias.summary)
            metrics[f"{ctx}.{prefix}mu"] = _metric(row["mu"], (row["mu_ci_low"], row["mu_ci_high"]), why)
            metrics[f"{ctx}.{prefix}sigma"] = _metric(
                row["sigma"], (row["sigma_ci_low"], row["sigma_ci_high"]), why
            )
            if "beta" in row:
                metrics[f"{ctx}.{prefix}beta"] = _metric(
                    row["beta"], (row["beta_ci_low"], row["beta_ci_high"]), NO_BETA
                )
                metrics[f"{ctx}.{prefix}n_common"] = Metric(row["n_common"], no_ci=COUNT)
            metrics[f"{ctx}.{prefix}n_scored"] = Metric(row["n_scored"], no_ci=COUNT)
        scatter[ctx] = {
            "points": scatter_points(
                scored.corpus.scores[ctx],
                scored.generated.scores[ctx],
                scored.reference.scores[ctx],
                options.scatter_words,
            ),
            "fit": {
                "beta": scored.generated.amplification[ctx].beta,
                "intercept": scored.generated.amplification[ctx].intercept,
                "reference_beta": scored.reference.amplification[ctx].beta,
                "reference_intercept": scored.reference.amplification[ctx].intercept,
            },
        }
    metrics["n_samples"] = Metric(n_used, no_ci=COUNT)
    metrics["n_failed"] = Metric(n_attempts - n_used, no_ci=COUNT)
    ctxs = list(scored.generated.scores)
    return TaskResult(
        metrics=metrics,
        extra={
            "rows": rows,
            "scatter": scatter,
            "tokenisation": scored.normaliser.describe(),
            "count_configs": {c: sc.counts.config.describe() for c, sc in scored.corpus.scores.items()},
            "pairs": scored.corpus.scores[ctxs[0]].counts.pairs.describe() if ctxs else {},
        },
        records=records,
        headline=[f"{c}.{m}" for c in ctxs for m in ("beta", "reference.beta", "mu")],
    )
