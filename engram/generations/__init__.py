"""Generations: the live projection and the shadows a re-derivation builds beside it.

The registry (:mod:`generations.registry`), a generation's schema (:mod:`generations.schema`),
its groups, topics and lag (:mod:`generations.runtime`), the diff of two by content
(:mod:`generations.diff`) and :mod:`generations.reading`, the one place that decides which
generation a reader reads (docs/rederivation.md)."""
