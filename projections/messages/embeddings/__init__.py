"""Semantic embeddings of the messages: who makes vectors, and where they are kept.

- :mod:`engram.projections.messages.embeddings.embedder` — the :class:`~engram.projections.messages.embeddings.embedder.Embedder` interface every
  implementation satisfies, the identity of a model (name and size), and the failures.
- :mod:`engram.projections.messages.embeddings.local` — the default: WordLlama, whose weights ship inside its wheel, so a
  fresh install embeds with no network, no GPU and no account (docs/retrieval.md says why).
- :mod:`engram.projections.messages.embeddings.remote` — any OpenAI-compatible ``/v1/embeddings`` endpoint through the
  ``openai`` client, only when its origin is allow-listed, retried on the server's back-off.
- :mod:`engram.projections.messages.embeddings.generation` — an embedding generation's name: model, size and text recipe.
- :mod:`engram.projections.messages.embeddings.store` — vectors in PostgreSQL (migration 0022), by generation, built then
  activated atomically, searched by exact cosine similarity over one principal's vectors.
- :mod:`engram.projections.messages.embeddings.wiring` — the embedder the settings ask for.

It belongs to the messages wing (above :mod:`policies`, whose endpoint allow-list it shares with
the model-assisted extractor), and imports no stage, no broker and no formation core
(contracts in pyproject.toml).
"""
