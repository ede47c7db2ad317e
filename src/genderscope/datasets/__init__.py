"""Dataset loaders shared by several tasks (WinoBias, ...)."""
