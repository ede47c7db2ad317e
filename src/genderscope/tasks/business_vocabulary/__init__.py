"""GenderBench probe ``business_vocabulary``: gendered words in letters written for men and women."""
