"""Hyperparameter search: experiments over a pipeline's parameters, each trial an ordinary run
(docs/experiments.md)."""
