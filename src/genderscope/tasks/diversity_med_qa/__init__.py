"""GenderBench probe ``diversity_med_qa``: accuracy on medical questions by patient gender."""
