"""GenderBench probe ``inventories``: the gender of characters written from gender-inventory traits."""
