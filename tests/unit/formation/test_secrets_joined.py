"""The joined view of a text is skipped only where it is the text itself: wherever
``_MAY_JOIN`` sees nothing, :func:`formation.secrets.joined_view` glues and spells nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.formation.secrets import _MAY_JOIN, find_secrets, joined_view
from tests.unit.formation.test_screening import TEXTS, WORDS

PIECES = [
    "sk-", "sk-proj", "ghp_", "AKIA", "dash", "DASH", "Hyphen", "underscore", "-", "_", ".",
    "a", "b", "1", "x,", "y)", "abc-", "def_", "ya29.", "SG.", "hf_abc", "12345678",
]  # fmt: skip


def _holds(text: str) -> None:
    if _MAY_JOIN.search(text) is None:
        assert joined_view(text)[0] == text, text


def test_the_joined_view_is_the_text_wherever_nothing_may_join_on_the_corpus() -> None:
    for text in TEXTS:
        _holds(text)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(WORDS) | st.sampled_from(PIECES) | st.text(max_size=3),
        max_size=16,
    ),
    st.sampled_from([" ", "  ", "\n", " \t"]),
)
def test_the_joined_view_is_the_text_wherever_nothing_may_join_on_any_words(
    words: list[str], separator: str
) -> None:
    _holds(separator.join(words))


def test_split_secrets_are_still_found() -> None:
    spelled = "my key is sk dash proj dash abcdefghijklmnopqrstuvwxyz123456"
    chunked = "ghp _ abcdefghijklmnopqrstuvwxyz0123456789"
    single = "s k - a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4"
    for text in (spelled, chunked, single):
        assert _MAY_JOIN.search(text) is not None
    assert find_secrets(spelled)
