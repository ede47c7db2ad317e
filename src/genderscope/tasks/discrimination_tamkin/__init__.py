"""GenderBench probe ``discrimination_tamkin``: yes/no decisions in high-stakes scenarios, by gender."""
