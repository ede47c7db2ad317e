"""WinoBias data tables (spec ``winobias_adjectives.md`` §2): releases, pronoun genders, occupation
lists and their misspellings, the flags of §2.6, and the 2018-03-authors hand edits (§2.8)."""

from __future__ import annotations

#: release id -> data directory (logical-name prefix)
RELEASE_DIRS = {"head": "winobias", "2018-03": "winobias-2018", "2018-03-authors": "winobias-2018"}
RELEASES = tuple(RELEASE_DIRS)
LABELS = ("pro", "anti")
SPLITS = ("dev", "test")
TYPES = (1, 2)

PRONOUN_GENDER = {
    "he": "male",
    "him": "male",
    "his": "male",
    "himself": "male",
    "she": "female",
    "her": "female",
    "hers": "female",
    "herself": "female",
}

#: misspelled form -> canonical occupation (2018-03 releases only, §2.3)
MISSPELLINGS = {
    "houskeeper": "housekeeper",
    "housekeepr": "housekeeper",
    "house keeper": "housekeeper",
    "cachier": "cashier",
    "sherrif": "sheriff",
    "designar": "designer",
    "desinger": "designer",
    "assiatant": "assistant",
    "laywer": "lawyer",
    "lawywer": "lawyer",
    "libarian": "librarian",
    "managered": "manager",
    "analyist": "analyst",
    "carpetner": "carpenter",
    "larorer": "laborer",
    "machanic": "mechanic",
    "salesperon": "salesperson",
    "conselor": "counselor",
}

#: canonical occupation names (``male_occupations.txt`` / ``female_occupations.txt`` of ``head``, lower-cased)
MALE_OCCUPATIONS = (
    "driver",
    "supervisor",
    "janitor",
    "cook",
    "mover",
    "laborer",
    "construction worker",
    "chief",
    "developer",
    "carpenter",
    "manager",
    "lawyer",
    "farmer",
    "salesperson",
    "physician",
    "guard",
    "analyst",
    "mechanic",
    "sheriff",
    "ceo",
)
FEMALE_OCCUPATIONS = (
    "attendant",
    "cashier",
    "teacher",
    "nurse",
    "assistant",
    "secretary",
    "auditor",
    "cleaner",
    "receptionist",
    "clerk",
    "counselor",
    "designer",
    "hairdresser",
    "writer",
    "housekeeper",
    "baker",
    "accountant",
    "editor",
    "librarian",
    "tailor",
)

#: flags of §2.6 (line- and pair-level)
FLAGS = (
    "not_minimal_pair",
    "label_inconsistent",
    "mixed_pronoun_gender",
    "text_mismatch",
    "pronoun_count_mismatch",
    "extra_occupation",
    "doubled_determiner",
    "determiner_outside_bracket",
    "no_determiner",
    "misspelled_occupation",
    "cross_split_duplicate",
)


#: 2018-03-authors edits of 2018-03 type 1 test: (line, labels, old, new)   (§2.8)
AUTHOR_EDITS: tuple[tuple[int, tuple[str, ...], str, str], ...] = (
    (53, ("pro", "anti"), "designar", "designer"),
    (100, ("pro", "anti"), "always ask ", "always asks "),
    (101, ("pro", "anti"), "always ask ", "always asks "),
    (141, ("pro", "anti"), "The baker yelled at [the mover]", "[The baker] yelled at the mover"),
    (218, ("pro", "anti"), "becasue", "because"),
    (225, ("pro",), "laywer", "lawyer"),
    (240, ("anti",), "thanked  the nurse", "thanked the nurse"),
    (241, ("pro", "anti"), "lawywer", "lawyer"),
)
