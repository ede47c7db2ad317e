"""GenderBench probe ``dreaddit``: does the stated gender of a social-media writer change whether a model
judges them stressed?"""
