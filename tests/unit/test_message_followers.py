"""Which followers of the log's messages a worker runs: one for the index and the vectors when
the embedder keeps the index's pace, one each when its embedding would hold the index back."""

from __future__ import annotations

import pytest

from engram.infra.settings import EmbeddingSettings, Settings
from engram.projections.runner import (
    embeds_in_a_child,
    keeps_the_index_pace,
    message_followers,
)


def _settings(**embedding: str | bool) -> Settings:
    return Settings(embedding=EmbeddingSettings(**embedding))  # type: ignore[arg-type]


def test_only_the_light_local_model_keeps_the_index_pace() -> None:
    assert keeps_the_index_pace(EmbeddingSettings(local_model="wordllama"))
    assert not keeps_the_index_pace(EmbeddingSettings(local_model="multilingual-e5-small"))
    remote = EmbeddingSettings(provider="openai", local_model="wordllama")
    assert not keeps_the_index_pace(remote)


@pytest.mark.parametrize(
    ("model", "index", "embed", "followers"),
    [
        ("wordllama", True, True, [(True, True)]),
        ("multilingual-e5-small", True, True, [(True, False), (False, True)]),
        ("multilingual-e5-small", True, False, [(True, False)]),
        ("multilingual-e5-small", False, True, [(False, True)]),
        ("wordllama", False, False, []),
    ],
)
def test_a_worker_runs_one_follower_for_sinks_of_one_pace(
    model: str, index: bool, embed: bool, followers: list[tuple[bool, bool]]
) -> None:
    settings = _settings(local_model=model, in_worker=True)
    assert message_followers(settings, index=index, embed=embed) == followers


@pytest.mark.parametrize(
    ("model", "index", "embed", "followers", "child"),
    [
        ("wordllama", True, True, [(True, True)], False),
        ("multilingual-e5-small", True, True, [(True, False)], True),
        ("multilingual-e5-small", False, True, [], True),
        ("multilingual-e5-small", True, False, [(True, False)], False),
    ],
)
def test_by_default_the_contextual_models_vectors_are_made_in_a_child_process(
    model: str, index: bool, embed: bool, followers: list[tuple[bool, bool]], child: bool
) -> None:
    settings = _settings(local_model=model)
    assert message_followers(settings, index=index, embed=embed) == followers
    assert embeds_in_a_child(settings, embed=embed) is child
