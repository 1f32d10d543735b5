"""The messages wing: the index of every message on the episodic log, its lexical postings and
its vectors (the index's and the vectors' sinks of the log follower, the log's reading for
them, and the embedders).

This module is the wing's public face: the other wings use what it names here and nothing else
(an import-linter contract in pyproject.toml holds them to it); the wing imports none of theirs.
"""

from engram.projections.messages.embeddings import store as embedding_store
from engram.projections.messages.embeddings.embedder import Embedder, Vectors
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.embeddings.resident import RESIDENT as resident_vectors
from engram.projections.messages.glossary import glosses
from engram.projections.messages.lexical import (
    INDEX_LANGUAGE,
    Statistics,
    best_messages,
    question_statistics,
)
from engram.projections.messages.spelling import Spelling, language_of, read_spelling, words_of
from engram.projections.messages.store import (
    INDEXER,
    MessageKey,
    hide_messages,
    redacted_messages,
)
from engram.projections.messages.vectors import FOLLOWER_PREFIX, message_of_item

__all__ = [
    "FOLLOWER_PREFIX",
    "INDEXER",
    "INDEX_LANGUAGE",
    "Embedder",
    "EmbeddingGeneration",
    "MessageKey",
    "Spelling",
    "Statistics",
    "Vectors",
    "best_messages",
    "embedding_store",
    "glosses",
    "hide_messages",
    "language_of",
    "message_of_item",
    "question_statistics",
    "read_spelling",
    "redacted_messages",
    "resident_vectors",
    "words_of",
]
