"""GenderBench probe ``isear``: which emotion does a model attribute to a man, a woman or a non-binary
person in the same situation?"""
