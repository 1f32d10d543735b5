"""An embedding generation's name says model, size and recipe; recipes are pure and stable."""

from __future__ import annotations

import numpy as np
import pytest

from engram.projections.messages.embeddings.embedder import (
    EmbeddingModel,
    EmbeddingRefused,
    unit_rows,
)
from engram.projections.messages.embeddings.generation import (
    DEFAULT_RECIPE,
    EmbeddingGeneration,
    UnknownRecipe,
    content_words,
    plain,
)


def test_the_name_says_model_size_and_recipe() -> None:
    generation = EmbeddingGeneration.of(EmbeddingModel("m", 64), "plain-v1")
    assert generation.name == "m/64/plain-v1"
    assert EmbeddingGeneration("m", 64).recipe == DEFAULT_RECIPE
    assert generation != EmbeddingGeneration("m", 128, "plain-v1")


def test_an_unknown_recipe_or_a_size_below_one_is_refused() -> None:
    with pytest.raises(UnknownRecipe, match="unknown text recipe"):
        EmbeddingGeneration("m", 64, "mystery-v9")
    with pytest.raises(ValueError, match="positive size"):
        EmbeddingGeneration("m", 0)


def test_plain_collapses_white_space_only() -> None:
    assert plain("  Went   to\n the Café ") == "Went to the Café"


def test_content_words_drops_function_words_and_keeps_accents() -> None:
    assert content_words("What did she bring back from the Café in Kyoto?") == (
        "bring back café kyoto"
    )


def test_content_words_falls_back_to_the_text_when_nothing_else_is_left() -> None:
    assert content_words("Who are you?") == "Who are you?"


def test_unit_rows_normalises_keeps_zero_rows_and_checks_the_size() -> None:
    rows = unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]]), dimensions=2)
    assert rows.dtype == np.float32
    assert np.allclose(rows, [[0.6, 0.8], [0.0, 0.0]])
    with pytest.raises(EmbeddingRefused, match="size 3"):
        unit_rows(np.zeros((1, 2)), dimensions=3)
    with pytest.raises(EmbeddingRefused, match="not finite"):
        unit_rows(np.array([[np.nan, 1.0]]), dimensions=2)
