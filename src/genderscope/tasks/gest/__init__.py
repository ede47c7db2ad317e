"""GEST (GenderBench's probe): who is more likely to say a stereotypical first-person sentence?"""
