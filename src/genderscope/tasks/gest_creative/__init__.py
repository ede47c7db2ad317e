"""GenderBench probe ``gest_creative``: the gender of characters written from GEST mottos."""
