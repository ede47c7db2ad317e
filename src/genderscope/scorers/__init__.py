"""Offline scorers of generated texts (sentiment, hate/offensive, HurtLex, refusal, length, HELM's gender
word measures): the contract in :mod:`genderscope.scorers.base`; each scorer in its own module, imported on
use (their packages come with ``pip install 'genderscope[generation]'``)."""
