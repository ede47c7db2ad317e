"""Task ``winobias-adjectives``: WinoBias with gender-associated adjectives, for chat models."""
