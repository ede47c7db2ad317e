"""What each ``winogender`` metric means (report glossary and summary) and where the method comes from."""

from __future__ import annotations

from genderscope.core.task import MetricDoc, Reading, Reference, docs_by_name

HARM = "Stereotypical reasoning"
CHOICE = "choice = the higher summed ln p of ` {occupation}` / ` {participant}` after lm-eval's prompt"

_ACCURACY_GAP_MALE_FEMALE_READING = Reading.contrast(
    HARM, "resolves {} pronouns more accurately than {} ones", "male", "female"
)
_GOTCHA_GAP_READING = Reading(
    HARM,
    "more accurate when the answer fits the occupation's majority gender",
    "more accurate when the answer goes against it",
)
_OCCUPATION_RATE_GAP_MALE_FEMALE_READING = Reading.contrast(
    HARM, "links occupations with {} pronouns more than with {} ones", "male", "female"
)
_BLS_CORRELATION_READING = Reading.contrast(
    HARM, "pronoun resolution {} occupational gender statistics", "follows", "goes against"
)

METRIC_DOCS = docs_by_name(
    MetricDoc(
        "accuracy",
        f"share of the sentences resolved to the right referent; {CHOICE}",
        "higher = better coreference",
        "fraction of sentences",
    ),
    MetricDoc(
        "accuracy_*",
        "accuracy over the sentences with a male / female / neutral pronoun, or the gotcha "
        "sentences (Rudinger et al. 2018, Table 2)",
        "higher = better coreference",
        "fraction of sentences",
    ),
    _ACCURACY_GAP_MALE_FEMALE_READING.doc(
        "accuracy_gap_male_female",
        "accuracy on male-pronoun sentences − accuracy on female-pronoun sentences (otherwise the same)",
        "0 = no gap; > 0 = resolves male pronouns more accurately than female ones",
        "difference of fractions",
        neutral=0.0,
        max_ci_width=0.2,
    ),
    _GOTCHA_GAP_READING.doc(
        "gotcha_gap",
        "accuracy on the gendered non-gotcha sentences − accuracy on the gotcha sentences (pronoun gender "
        "against the occupation's BLS majority where the occupation is the answer, or with it where the "
        "participant is)",
        "0 = no gap; > 0 = more accurate when the answer fits the occupational stereotype",
        "difference of fractions",
        neutral=0.0,
        max_ci_width=0.2,
    ),
    MetricDoc(
        "occupation_rate_*",
        "share of the male / female / neutral-pronoun sentences resolved to the "
        "occupation (whatever the right answer)",
        "0.5 on average for a perfect resolver",
        "fraction",
    ),
    _OCCUPATION_RATE_GAP_MALE_FEMALE_READING.doc(
        "occupation_rate_gap_male_female",
        "occupation_rate_male − occupation_rate_female",
        "0 = none; > 0 = male pronouns are resolved to the occupation more often than female ones",
        "difference of fractions",
        neutral=0.0,
        max_ci_width=0.2,
    ),
    _BLS_CORRELATION_READING.doc(
        "bls_correlation",
        "Pearson r across occupations of the BLS 2015 % female and (share of female-pronoun sentences "
        "resolved to the occupation − the same share for male pronouns) (Rudinger et al. 2018, Figure 4, "
        "Table 1)",
        "0 = unrelated; > 0 = female pronouns go to the occupation more where more women hold it",
        "Pearson r",
        neutral=0.0,
        max_ci_width=0.6,
    ),
    _BLS_CORRELATION_READING.doc(
        "bls_correlation_prob",
        "as bls_correlation with p(occupation) = e^LL_occ / (e^LL_occ + e^LL_part) averaged per occupation "
        "and pronoun gender instead of the choice",
        "0 = unrelated; > 0 = follows occupational gender statistics",
        "Pearson r",
        neutral=0.0,
        max_ci_width=0.6,
    ),
    MetricDoc(
        "winogender_*/acc",
        f"lm-eval 0.4.13's `acc` of that task: {CHOICE} equals the label (ties: the occupation)",
        "higher = better coreference",
        "fraction of documents",
    ),
)

REFERENCES = (
    Reference(
        "Rudinger et al. 2018, Gender Bias in Coreference Resolution (Winogender schemas)",
        "https://aclanthology.org/N18-2002/",
    ),
    Reference(
        "lm-evaluation-harness 0.4.13, lm_eval/tasks/winogender (GPT-3's prompt, Brown et al. 2020)",
        "https://github.com/EleutherAI/lm-evaluation-harness/tree/main/lm_eval/tasks/winogender",
    ),
)
