"""Task ``honest``: HONEST (Nozza et al. 2021), how often a model completes sentences about women, men and
queer identities with hurtful words, in English, Spanish, French, Italian, Portuguese and Romanian.

Items: the templates of ``honest/binary/<lang>_template.tsv`` for each of ``--languages`` and, with
``en``, ``honest/queer_nonqueer/en_template.tsv`` (:mod:`.data`; ``--limit N``: the templates of
the first N sentence frames of each set, so every identity group keeps the same frames).  Each
template gets k completions (``--k``, default 20): a masked LM's top-k fills, or k sampled continuations
/ chat replies (:mod:`.ask`).  A completion is hurtful when it holds a word of the language's
HurtLex (conservative level), matched as the ``honest`` package matches it (:mod:`.lexicon`).  Metrics
(:mod:`.metrics`): HONEST per set, identity group and HurtLex category, and the female − male (queer −
non-queer) gap, each with a 95% interval over sentence frames (jackknife-t; ``--ci-method percentile``:
the frame bootstrap).

HurtLex is CC BY-NC-SA 4.0: the run records its licence and ``run``, the report and the model card show
the non-commercial notice.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.evidence import ReportFacts
from genderscope.core.options import bootstrap_seed_opt, opt
from genderscope.core.primitives import CHAT, FILL_MASK, GENERATE, TOKENIZE, Tokens, tokenize_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.core.task import Task, TaskResult
from genderscope.core.metrics import Measurement, Metric
from genderscope.data.hurtlex import CATEGORIES, LICENCE
from genderscope.data.hurtlex import dataset_name as hurtlex_file
from genderscope.stats.jackknife import JACKKNIFE_T
from genderscope.stats.rules import IntervalRule, rule_intervals
from genderscope.tasks.honest import ask
from genderscope.tasks.honest.data import (
    BINARY,
    LANGUAGES,
    QUEER,
    Template,
    dataset_name,
    first_frames,
    load_templates,
)
from genderscope.tasks.honest.glossary import HONEST_CODE, HONEST_LGBTQ, HONEST_PAPER, HURTLEX, METRIC_DOCS
from genderscope.tasks.honest.lexicon import ACCENTS, SENTENCE, WORD, Lexicon, load_lexicon, resolve_accents
from genderscope.tasks.honest.metrics import SetCounts, frame_clusters, group_category_cells, set_metrics

INFO, COMPLETE = "tokenizer", "complete"
TOKENIZER_ID = "honest/tokenizer"
#: hurtful lemmas per language the null model may answer (:func:`.ask.null_choices`)
NULL_HURTFUL = 3


@dataclass
class HonestOptions:
    languages: list[str] = opt(
        list(LANGUAGES), f"template languages, comma-separated ({', '.join(LANGUAGES)})"
    )
    queer: bool = opt(True, "with en: also the English queer/non-queer templates (Nozza et al. 2022)")
    k: int = opt(
        20, "completions per template: top-k fills (masked LMs) or k samples", minimum=1, maximum=ask.MAX_K
    )
    form: str = opt(
        "auto",
        "how completions are made: auto (from the model), fill-mask (masked LMs: top-k), generate (causal "
        "LMs: k sampled continuations), chat (k replies)",
        ("auto", ask.FILL, ask.GENERATE, ask.CHAT),
    )
    accents: str = opt(
        "auto",
        "accent stripping before HurtLex lookup: unidecode (the honest package's; pip install "
        "'genderscope[honest]'), nfkd (no extra package), auto (unidecode where installed)",
        ACCENTS,
    )
    ci_method: str = opt(
        JACKKNIFE_T,
        "intervals over sentence frames: jackknife-t (delete one frame, t with frames − 1 df) or percentile "
        "(bootstrap of the frames)",
        (JACKKNIFE_T, "percentile"),
    )
    n_boot: int = opt(
        1000, "bootstrap resamples of the sentence frames (percentile; 0 = no intervals)", minimum=0
    )
    bootstrap_seed: int = bootstrap_seed_opt()

    def __post_init__(self) -> None:
        langs = [str(x).strip().lower() for x in self.languages]
        unknown = [x for x in langs if x not in LANGUAGES]
        choose = f"choose from {', '.join(LANGUAGES)}"
        if unknown:
            raise ValueError(f"--languages: {unknown[0]!r} is not an HONEST language; {choose}")
        if not langs:
            raise ValueError(f"--languages names no language; {choose}")
        self.languages = list(dict.fromkeys(langs))


class HonestTask(Task):
    limit_meaning = (
        "the first N sentence frames of each template set (language), each with every identity term"
    )
    name = "honest"
    description = (
        "HONEST: hurtful sentence completions about women, men and queer identities in six languages"
    )
    Options = HonestOptions
    measurements = {
        ask.FILL: Measurement(frozenset({FILL_MASK, TOKENIZE}), "top-k fills of the slot"),
        ask.GENERATE: Measurement(frozenset({GENERATE}), "k sampled continuations"),
        ask.CHAT: Measurement(frozenset({CHAT}), "k replies completing the sentence"),
    }
    measurement_option = "form"
    metric_docs = METRIC_DOCS
    report_facts = ReportFacts(
        evidence=("counts.completions",), evidence_unit="completions", unreadable=("counts.failed_share",)
    )
    references = (HONEST_PAPER, HONEST_LGBTQ, HONEST_CODE, HURTLEX)

    def __init__(self, options: HonestOptions, ctx: Any):
        super().__init__(dataclasses.replace(options, accents=resolve_accents(options.accents)), ctx)

    # -- data -----------------------------------------------------------------------------------------
    @property
    def sets(self) -> list[tuple[str, str]]:
        """(identity set, language) pairs of this run, in order."""
        out = [(BINARY, lang) for lang in self.options.languages]
        return out + ([(QUEER, "en")] if self.options.queer and "en" in self.options.languages else [])

    def datasets(self) -> list[str]:
        files = [dataset_name(s, lang) for s, lang in self.sets]
        return files + [hurtlex_file(lang) for lang in self.options.languages]

    def templates(self, identity_set: str, language: str) -> list[Template]:
        rows = load_templates(self.ctx.data, identity_set, language)
        return rows if self.ctx.limit is None else first_frames(rows, max(0, int(self.ctx.limit)))

    @cached_property
    def lexicons(self) -> dict[str, Lexicon]:
        return {
            lang: load_lexicon(self.ctx.data, lang, self.options.accents) for lang in self.options.languages
        }

    def null_choices(self, language: str) -> list[str]:
        """What the null model may answer in ``language`` (:func:`.ask.null_choices`)."""
        lex = self.lexicons[language]
        hurtful = [w for w in lex.first_category if w.isalpha()][:NULL_HURTFUL]
        first = load_templates(self.ctx.data, BINARY, language)[0]
        return ask.null_choices(first, hurtful, lex)

    # -- questions ------------------------------------------------------------------------------------
    @property
    def form(self) -> str:
        return self.options.form if self.options.form != "auto" else (self.chosen_measurement() or ask.FILL)

    def rounds(self) -> Rounds:
        if self.form == ask.FILL:
            return Rounds(
                Round(INFO, lambda _: [Attempt(TOKENIZER_ID, 1, tokenize_request(""))]),
                Round(COMPLETE, self._ask_fills),
            )
        return Rounds(Round(COMPLETE, lambda _: self._ask_samples()))

    def _ask_fills(self, answers: Answers) -> list[Attempt]:
        info = answers.first(INFO)
        mask = Tokens.of(info.response).specials.mask if info is not None and info.ok else None
        if not mask:
            raise UsageError(
                "honest --form fill-mask needs a masked LM: the model's tokenizer has no mask token"
            )
        out = []
        for s, lang in self.sets:
            choices = self.null_choices(lang)
            for i, t in enumerate(self.templates(s, lang)):
                req = ask.fill_request(t, mask, self.options.k, choices)
                out.append(Attempt(ask.item_id(s, lang, i), 1, req, {"set": s, "language": lang, "index": i}))
        return out

    def _ask_samples(self) -> list[Attempt]:
        gen = self.ctx.generation
        chat = self.form == ask.CHAT
        temperature = float(gen.get("temperature", 1.0))
        max_tokens = int(
            gen.get("max_tokens") or (ask.DEFAULT_CHAT_TOKENS if chat else ask.DEFAULT_MAX_TOKENS)
        )
        out = []
        for s, lang in self.sets:
            choices = self.null_choices(lang)
            for i, t in enumerate(self.templates(s, lang)):
                meta = {"set": s, "language": lang, "index": i}
                for j in range(self.options.k):
                    if chat:
                        req = ask.chat_form_request(t, lang, max_tokens, temperature, choices)
                    else:
                        seed = ask.sample_seed(self.ctx.seeds.generation, s, lang, i, j)
                        req = ask.generation_request(t, max_tokens, temperature, seed)
                    out.append(Attempt(ask.item_id(s, lang, i), j + 1, req, meta))
        return out

    # -- scoring --------------------------------------------------------------------------------------
    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        scored = [r for r in results if r.attempt.item_id != TOKENIZER_ID]
        counts, records, tally = self.read(scored)
        records = [{}] * (len(results) - len(scored)) + records  # the tokenizer round comes first
        metrics: dict[str, Metric] = {}
        table: list[dict[str, Any]] = []
        for s in counts:
            got, rows = self.set_results(s)
            metrics.update(got)
            table += rows
        headline = [m for s in counts for m in (f"gap_{s.key}", f"honest_{s.key}")]
        extra = {
            "counts": tally,
            "sets": [set_summary(s) for s in counts],
            "categories": table,
            "parameters": self.parameters(),
        }
        return TaskResult(metrics, extra, records, headline)

    def parameters(self) -> dict[str, Any]:
        o = self.options
        mode = WORD if self.form == ask.FILL else SENTENCE
        return {
            "form": self.form,
            "k": o.k,
            "matching": mode,
            "accents": accents_version(o.accents),
            "hurtlex_level": "conservative",
            "hurtlex_licence": LICENCE,
        }

    def read(self, results: Sequence[AttemptResult]) -> tuple[list[SetCounts], list[dict[str, Any]], dict]:
        """Per set its counts, per attempt its record, and the run's tally (completions, failed, skipped)."""
        mode = WORD if self.form == ask.FILL else SENTENCE
        plan = {(s, lang): self.templates(s, lang) for s, lang in self.sets}
        n = {key: np.zeros(len(ts), dtype=np.int64) for key, ts in plan.items()}
        cats = {lang: lex.categories for lang, lex in self.lexicons.items()}
        hits = {
            (s, lang): np.zeros((len(ts), len(cats[lang])), dtype=np.int64) for (s, lang), ts in plan.items()
        }
        records, failed, skipped = [], 0, 0
        for r in results:
            m = r.attempt.meta
            s, lang, i = str(m["set"]), str(m["language"]), int(m["index"])  # type: ignore[arg-type]
            got = ask.completions(r, plan[(s, lang)][i].prompt)
            if got is None:
                skipped += int(r.skipped)
                failed += int(not r.skipped)
                records.append({})
                continue
            found = [self.lexicons[lang].match(c, mode) for c in got]
            n[(s, lang)][i] += len(got)
            for c in found:
                if c is not None:
                    hits[(s, lang)][i, cats[lang].index(c)] += 1
            hurtlex = [c for c in found if c]
            records.append({"completions": got, "hurtful": len(hurtlex), "hurtlex": hurtlex})
        sets = [
            SetCounts(
                ask.set_key(s, lang), s, ts, n[(s, lang)], hits[(s, lang)], cats[lang], frame_clusters(ts)
            )
            for (s, lang), ts in plan.items()
        ]
        total = int(sum(x.sum() for x in n.values()))
        asked = len(results) - skipped
        tally = {
            "templates": sum(len(ts) for ts in plan.values()),
            "completions": total,
            "hurtful": int(sum(h.sum() for h in hits.values())),
            "attempts": len(results),
            "failed": failed,
            "skipped": skipped,
            "failed_share": failed / asked if asked else 0.0,
        }
        return sets, records, tally

    def set_results(self, s: SetCounts) -> tuple[dict[str, Metric], list[dict[str, Any]]]:
        """One set's metrics and its group × category table rows, with intervals over sentence frames."""
        o = self.options

        def stat(W: np.ndarray) -> dict[str, np.ndarray]:
            cells = {f"cell:{k}": v for k, v in group_category_cells(s, W).items()}
            return {**set_metrics(s, W), **cells}

        rule = (
            IntervalRule(jackknife_metrics=("*",))
            if o.ci_method == JACKKNIFE_T
            else IntervalRule(o.ci_method)
        )
        names, point, cols = rule_intervals(
            stat, len(s.templates), s.clusters, o.n_boot, o.bootstrap_seed, rule
        )
        metrics, rows = {}, []
        n_group = {g: float(member @ s.n) for g, member in s.groups().items()}
        for name, value, (lo, hi, why) in zip(names, point, cols):
            v = None if np.isnan(value) else float(value)
            if not name.startswith("cell:"):
                metrics[name] = Metric(v, lo, hi, why)
                continue
            group, code = name[len("cell:") :].split("/")
            lo, hi = _clip01(lo), _clip01(hi)
            rows.append(
                {
                    "set": s.key,
                    "group": group,
                    "category": code,
                    "description": CATEGORIES.get(code, ""),
                    "completions": int(n_group[group]),
                    "honest": v,
                    "ci_low": lo,
                    "ci_high": hi,
                    "hurtlex_licence": LICENCE,
                }
            )
        return metrics, rows


def _clip01(x: float | None) -> float | None:
    return None if x is None else min(1.0, max(0.0, x))


def set_summary(s: SetCounts) -> dict[str, Any]:
    """One row of the ``sets`` table: the set, its templates, frames, completions and hurtful ones, and
    the licence of the HurtLex lexicon they were matched with (non-commercial: shown with every export)."""
    return {
        "set": s.key,
        "identity_set": s.identity_set,
        "templates": len(s.templates),
        "frames": int(s.clusters.max()) + 1 if s.clusters.size else 0,
        "completions": int(s.n.sum()),
        "hurtful": int(s.hits.sum()),
        "hurtlex": hurtlex_file(s.key[:2]),
        "hurtlex_licence": LICENCE,
    }


def accents_version(accents: str) -> str:
    """The accent stripping used, with the Unidecode version when it is unidecode."""
    if accents != "unidecode":
        return accents
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"unidecode {version('Unidecode')}"
    except PackageNotFoundError:
        return "unidecode"
