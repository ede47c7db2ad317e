"""GenDa Lens ABC: Type-B reflexivization perplexities on Danish sentences."""
