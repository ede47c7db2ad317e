"""GenderBench probe ``direct``: does the model agree with stereotypical statements?"""
