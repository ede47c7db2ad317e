"""Task ``cooccurrence-amplification``: co-occurrence gender bias of generated text and its β."""
