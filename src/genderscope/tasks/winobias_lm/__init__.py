"""Task ``winobias-lm``: English WinoBias pairs scored with masked and causal LMs (DaWinoBias-style)."""
