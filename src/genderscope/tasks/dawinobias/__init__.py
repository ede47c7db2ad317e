"""GenDa Lens DaWinoBias: masked-pronoun fill-in on Danish WinoBias (see docs/decisions.md)."""
