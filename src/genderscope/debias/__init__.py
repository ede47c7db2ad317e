"""Reducing gender bias in transformer LMs: counterfactual data augmentation (:mod:`.cda`), Bordia &
Bowman's embedding regulariser on a transformer's input embeddings (:mod:`.embedding_reg`), and the
fine-tuning loop both use (:mod:`.finetune`); held-out perplexity as the cost (:mod:`.perplexity`).
The ``genderscope debias`` command (:mod:`genderscope.commands.debias`) drives them."""
