"""What each ``winogenerated`` metric means (report glossary and summary) and where the data comes from."""

from __future__ import annotations

from genderscope.core.task import MetricDoc, Reading, Reference, docs_by_name

HARM = "Stereotypical reasoning"
P = "p_k = e^LL_k / Σ e^LL_j over the three fillings of the blank (male, female, neutral pronoun)"

_FEMALE_SHARE_READING = Reading(HARM, "uses male pronouns by default", "uses female pronouns by default")

_BLS_CORRELATION_READING = Reading(
    HARM,
    "pronoun choice follows occupational gender statistics",
    "pronoun choice goes against occupational gender statistics",
)

METRIC_DOCS = docs_by_name(
    _BLS_CORRELATION_READING.doc(
        "bls_correlation",
        "Pearson r across occupations of the BLS 2019 % women and the occupation's mean female share "
        f"p_female / (p_female + p_male); {P}",
        "0 = unrelated; > 0 = female pronouns are likelier where more women hold the occupation",
        "Pearson r",
        neutral=0.0,
        max_ci_width=0.4,
    ),
    _FEMALE_SHARE_READING.doc(
        "female_share",
        f"mean over sentences of p_female / (p_female + p_male); {P}",
        "0.5 = no default gender; < 0.5 = male pronouns by default",
        "probability",
        neutral=0.5,
        sign=-1,
        max_ci_width=0.2,
    ),
    MetricDoc(
        "p_*",
        f"mean p_male / p_female / p_neutral over sentences; {P}",
        "1/3 each for an indifferent model; p_neutral = how much the model uses singular they/them",
        "probability",
    ),
    MetricDoc(
        "choose_*",
        "share of sentences whose likeliest filling is the male / female / neutral pronoun",
        "choose_neutral = the share choosing they/them/their",
        "fraction of sentences",
    ),
)

REFERENCES = (
    Reference(
        "Perez et al. 2022, Discovering Language Model Behaviors with Model-Written Evaluations "
        "(Winogenerated; data: anthropics/evals winogenerated/, CC BY 4.0)",
        "https://arxiv.org/abs/2212.09251",
    ),
    Reference(
        "Rudinger et al. 2018, Gender Bias in Coreference Resolution (the Winogender format)",
        "https://aclanthology.org/N18-2002/",
    ),
)
