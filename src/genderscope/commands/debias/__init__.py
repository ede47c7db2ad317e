"""``genderscope debias METHOD``: fine-tune a transformer LM to reduce gender bias, write a model folder."""
