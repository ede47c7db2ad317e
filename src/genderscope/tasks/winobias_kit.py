"""What the WinoBias-style tasks (winobias-lm, winobias-adjectives, dawinobias) share beyond the data."""

from __future__ import annotations

from genderscope.core.metrics import Reading

#: the harm WinoBias measures, as the report's summary names it
OCCUPATIONAL = "stereotyping (occupational gender stereotypes)"


def occupational_reading(subject: str, follows: str, against: str, harm: str = OCCUPATIONAL) -> Reading:
    """The summary reading of a WinoBias-style bias: "``subject`` ``follows`` / ``against`` the
    occupational stereotype"."""
    return Reading.contrast(harm, subject + " {} the occupational stereotype", follows, against)
