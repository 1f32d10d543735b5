"""The embedder interface: texts in, one unit-length float32 vector per text out.

Every implementation returns vectors normalised to unit length, so cosine similarity is a dot
product and the store can compare a query with a principal's vectors in one matrix product.
An implementation names itself by :class:`EmbeddingModel` (model name and size): that, with the
text recipe, is what an embedding generation is named by (:mod:`engram.projections.messages.embeddings.generation`), so
vectors from two models or two sizes are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from engram.infra.errors import EngramFailure

Vectors = NDArray[np.float32]
"""A ``(n, dimensions)`` float32 matrix, one unit-length row per text."""


InputType = Literal["query", "document"]
"""What a text is to an asymmetric model: a question (``query``) or what answers one
(``document``: a message, a belief). A symmetric model embeds both alike."""


@dataclass(frozen=True, slots=True)
class EmbeddingModel:
    """What made a vector: the model's name, the vector size, and the text recipe the model
    is used with (:mod:`engram.projections.messages.embeddings.generation`: how a text is prepared and whether questions
    and messages are embedded as such) — the recipe belongs to the model."""

    name: str
    dimensions: int
    recipe: str = "content-words-v1"


class Embedder(Protocol):
    """Makes vectors. ``embed`` keeps the order of ``texts`` and returns ``(len(texts), d)``;
    ``input_type`` says whether they are questions or documents (an asymmetric model embeds
    them differently; a symmetric one ignores it)."""

    @property
    def model(self) -> EmbeddingModel: ...

    async def embed(self, texts: Sequence[str], input_type: InputType = "document") -> Vectors: ...


class EmbeddingFailure(EngramFailure, RuntimeError):
    """No vectors could be made for a batch."""

    code = "embedding_failed"


class EmbeddingUnavailable(EmbeddingFailure):
    """The endpoint did not answer usefully within the attempts (outage, timeout, 429, 5xx);
    the same batch may succeed later."""

    code = "embedding_unavailable"
    retriable = True
    exit_code = 1


class EmbeddingRefused(EmbeddingFailure):
    """The endpoint refused the request (4xx other than 429) or answered something that is not
    one vector of the right size per text: retrying the same request will not help."""

    code = "embedding_refused"


def unit_rows(matrix: NDArray[np.floating], *, dimensions: int) -> Vectors:
    """``matrix`` as float32 rows of length one; a zero row (a text with no known token) stays
    zero, which is similar to nothing. Raises :class:`EmbeddingRefused` on a wrong size or a
    value that is not finite."""
    rows = np.asarray(matrix, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[1] != dimensions:
        raise EmbeddingRefused(f"expected vectors of size {dimensions}, got shape {rows.shape}")
    if not np.isfinite(rows).all():
        raise EmbeddingRefused("a vector holds a value that is not finite")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: Vectors = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return unit
