"""The light local embedder: WordLlama, with the weights its wheel ships.

WordLlama (MIT) is a static embedding model: a token-embedding table distilled from a large
language model's, average-pooled per text. The ``wordllama`` wheel carries the ``l2_supercat``
table at 256 dimensions (about 16 MB) and its tokenizer, so loading needs no network, and
``disable_download`` makes sure it never tries. There is no neural network to run: embedding is
tokenising plus a table look-up, a few thousand short messages a second on one core
(docs/benchmarks.md), which is why it can be the default of ``make demo`` on any laptop.
Smaller sizes (64, 128) are the first dimensions of the same table (Matryoshka training).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import wordllama
from wordllama import WordLlama

from engram.policies.endpoint import ModelConfigurationError
from engram.projections.messages.embeddings.embedder import (
    EmbeddingModel,
    InputType,
    Vectors,
    unit_rows,
)

CONFIG = "l2_supercat"
MODEL_NAME = f"wordllama-{CONFIG}"
"""The model's name in an embedding generation's name."""
SIZES = (64, 128, 256)
"""The sizes the packaged table offers: 256 and its Matryoshka prefixes."""
PACKAGE_DIR = Path(wordllama.__file__).resolve().parent
BATCH = 256
"""Texts per call into WordLlama (it batches internally too); keeps one call's memory bounded
and lets other tasks run between batches."""


class WordLlamaEmbedder:
    """The packaged WordLlama model, run in a worker thread so the event loop keeps serving."""

    def __init__(self, dimensions: int = 256) -> None:
        if dimensions not in SIZES:
            raise ModelConfigurationError(
                f"ENGRAM_EMBEDDING_DIMENSIONS={dimensions}: the local model offers {SIZES}"
            )
        self._model = EmbeddingModel(MODEL_NAME, dimensions)
        trunc = None if dimensions == 256 else dimensions
        # The wheel keeps the tokenizer under ``tokenizers/`` while WordLlama's own look-up
        # for packaged files tries ``tokenizer/`` (0.4.0.post1); its cache look-up uses
        # ``<cache_dir>/tokenizers/``, so the package directory as the cache finds both files.
        # ``disable_download`` turns any miss into an error instead of a Hugging Face request.
        self._wl: Any = WordLlama.load(
            config=CONFIG,
            dim=256,
            trunc_dim=trunc,
            cache_dir=PACKAGE_DIR,
            disable_download=True,
        )

    @property
    def model(self) -> EmbeddingModel:
        return self._model

    def embed_now(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts`` on the calling thread (benchmarks, scripts)."""
        size = self._model.dimensions
        parts = [np.zeros((0, size), dtype=np.float32)] + [
            self._wl.embed(list(texts[i : i + BATCH]), norm=False, return_np=True)
            for i in range(0, len(texts), BATCH)
        ]
        return unit_rows(np.vstack(parts), dimensions=size)

    async def embed(self, texts: Sequence[str], input_type: InputType = "document") -> Vectors:
        """``input_type`` is ignored: a static model embeds questions and messages alike."""
        return await asyncio.to_thread(self.embed_now, list(texts))

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder({self._model.name}, {self._model.dimensions})"
