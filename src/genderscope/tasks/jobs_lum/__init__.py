"""GenderBench probe ``jobs_lum``: the gender of characters written for occupations."""
