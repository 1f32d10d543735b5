"""The pattern arm's misses on text it was not written from, as families (issue 42, item 7).

Each family is a shape of real talk that the patterns got wrong on conversations nobody tuned
them to, told in several wordings written for this file (none comes from the evaluation
conversations): the beliefs a sentence that means it must form, exactly those of the family's
relations, and the sentences that must form none of them (an ``A:`` prefix: the other speaker
says it, which forms nothing of the principal's).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from engram.schemas.claims import ClaimsBatchFormed, Tense
from engram.schemas.common import Role
from tests.unit.formation.formed import batch


@dataclass(frozen=True)
class Family:
    relations: frozenset[str]
    same: tuple[tuple[str, frozenset[str]], ...]
    nothing: tuple[str, ...]


def _batch(sentence: str) -> ClaimsBatchFormed:
    if sentence.startswith("A:"):
        return batch(sentence[2:], Role.ASSISTANT)
    return batch(sentence)


def _of_family(sentence: str, family: Family) -> set[str]:
    """What forms of the family and holds now (a state kept as history, "used to", does not)."""
    return {
        c.statement
        for c in _batch(sentence).candidates
        if c.relation in family.relations and (c.tense is Tense.PRESENT or c.is_event)
    }


def _beliefs(*statements: str) -> frozenset[str]:
    return frozenset(statements)


FAMILIES: dict[str, Family] = {
    # 1. A taste followed by its reason: both halves are the speaker's, both form.
    "taste_then_reason": Family(
        frozenset({"prefers", "dislikes", "interested_in", "participated_in"}),
        same=(
            (
                "I can't stand crowded gyms, which is why I love running outdoors.",
                _beliefs(
                    "speaker dislikes crowded gyms (topic:crowded gyms)",
                    "speaker prefers running outdoors (topic:running outdoors)",
                ),
            ),
            (
                "I really love jazz, which is why I play the saxophone.",
                _beliefs(
                    "speaker prefers jazz (topic:jazz)",
                    "speaker participated in playing the saxophone",
                ),
            ),
            (
                "I hate loud bars, that's why I love quiet board game nights.",
                _beliefs(
                    "speaker dislikes loud bars (topic:loud bars)",
                    "speaker prefers quiet board game nights (topic:quiet board game nights)",
                ),
            ),
            (
                "I love gardening, which is why I grow my own tomatoes.",
                _beliefs("speaker prefers gardening (topic:gardening)"),
            ),
            (
                "I adore birdwatching; that is why I love early mornings.",
                _beliefs(
                    "speaker prefers birdwatching (topic:birdwatching)",
                    "speaker prefers early mornings (topic:early mornings)",
                ),
            ),
        ),
        nothing=(
            "Maybe I hate crowded gyms, which is why I might love running outdoors.",
            "Do I really love jazz, which is why I play the saxophone?",
            "She can't stand crowded gyms, which is why she loves running outdoors.",
            "I used to love jazz, which is why I kept a saxophone.",
            "A:I can't stand crowded gyms, which is why I love running outdoors.",
        ),
    ),
    # 2. A taste whose object holds a reflexive pronoun: the speaker is no one else.
    "taste_done_to_oneself": Family(
        frozenset({"prefers", "interested_in", "dislikes"}),
        same=(
            (
                "I love teaching myself new recipes.",
                _beliefs(
                    "speaker prefers teaching myself new recipes"
                    " (topic:teaching myself new recipes)"
                ),
            ),
            (
                "I love challenging myself with long hikes.",
                _beliefs(
                    "speaker prefers challenging myself with long hikes"
                    " (topic:challenging myself with long hikes)"
                ),
            ),
            (
                "I'm passionate about teaching myself languages.",
                _beliefs("speaker interested in teaching myself languages"),
            ),
            (
                "Honestly I adore pushing myself on the climbing wall.",
                _beliefs(
                    "speaker prefers pushing myself on the climbing wall"
                    " (topic:pushing myself on the climbing wall)"
                ),
            ),
        ),
        nothing=(
            "I love teaching him new recipes.",
            "I love challenging them with long hikes.",
            "I'd love to teach myself new recipes someday.",
            "I love myself.",
            "A:I love teaching myself new recipes.",
        ),
    ),
    # 3. A wish to the listener inside a longer compliment is the listener's, never the
    # speaker's: nothing of the speaker's tastes, events, plans or groups forms from it.
    "wish_inside_a_compliment": Family(
        frozenset(
            {"prefers", "interested_in", "participated_in", "intends_to", "member_of", "learning"}
        ),
        same=(("I'm learning the pottery wheel.", _beliefs("speaker learning pottery wheel")),),
        nothing=(
            "Your bowls are gorgeous, hoping you keep learning pottery!",
            "Your pottery is lovely and I hope you keep learning new techniques and start teaching soon.",
            "What a gorgeous photo, hope you have a blast at your dance competition next month!",
            "Love your paintings, I hope you have a blast on your trip to Rome next month.",
            "You're so brave and I really hope you enjoy volunteering at the shelter.",
            "Your bowls are gorgeous, I'm hoping you join the pottery club with me.",
            "Great photo, I hope you're loving Paris and learning French!",
            "Such a cool project, enjoy your camping trip next weekend!",
            "That's amazing, I hope you love the choir as much as I love singing.",
        ),
    ),
    # 4. A decision with a named partner told late in a longer sentence.
    "decision_late_in_a_sentence": Family(
        frozenset({"committed_to"}),
        same=(
            (
                "It was a tough few months at work, but in the end Marco and I have decided to open a bakery together.",
                _beliefs("speaker committed to open a bakery with Marco"),
            ),
            (
                "After a long talk over dinner last night, Priya and I decided to take a gap year together.",
                _beliefs("speaker committed to take a gap year with Priya"),
            ),
            (
                "We went back and forth for ages, and finally Tom and I decided to adopt a cat.",
                _beliefs("speaker committed to adopt a cat with Tom"),
            ),
            (
                "After a long talk, my boyfriend Sam and I have decided to move to Lisbon together.",
                _beliefs("speaker committed to move to Lisbon with Sam"),
            ),
        ),
        nothing=(
            "After a long talk, Sam and I haven't decided to move yet.",
            "After a long talk, Sam and I might have decided to move to Lisbon.",
            "In the end Marco and Ana decided to open a bakery together.",
            "A:It was a tough year, but in the end Marco and I decided to open a bakery together.",
        ),
    ),
    # 5. A wedding told in passing is a life event: someone else's attended, or one's own.
    "wedding_in_passing": Family(
        frozenset({"participated_in", "related_to"}),
        same=(
            (
                "My cousin's wedding was last weekend and I finally got to see everyone.",
                _beliefs("speaker participated in cousin's wedding (2024-W18)"),
            ),
            (
                "We danced all night at my brother's wedding.",
                _beliefs("speaker participated in brother's wedding"),
            ),
            (
                "I cried through the whole ceremony at my best friend's wedding last month.",
                _beliefs("speaker participated in best friend's wedding (2024-04)"),
            ),
            (
                "Our wedding last June was the best day of my life.",
                _beliefs("speaker related to spouse (spouse)"),
            ),
            (
                "I wore my grandmother's ring at our wedding.",
                _beliefs("speaker related to spouse (spouse)"),
            ),
        ),
        nothing=(
            "My sister's wedding is next month and I'm so nervous.",
            "I can't wait for Tom's wedding!",
            "How was your wedding?",
            "Your wedding photos are so pretty.",
            "We're planning our wedding for next spring.",
            "A:My cousin's wedding was last weekend.",
        ),
    ),
    # 6. A list of owned things under an umbrella word: the things, not the umbrella.
    "owned_list_under_an_umbrella": Family(
        frozenset({"owns"}),
        same=(
            (
                "I've got lots of camping gear, like a tent, a stove and a kayak.",
                _beliefs("speaker owns tent", "speaker owns stove", "speaker owns kayak"),
            ),
            (
                "I have a bunch of instruments - a cello, a banjo and two guitars.",
                _beliefs("speaker owns cello", "speaker owns banjo", "speaker owns guitars"),
            ),
            (
                "I own lots of stuff for my hobbies, like a telescope, a microscope and a 3D printer.",
                _beliefs(
                    "speaker owns telescope", "speaker owns microscope", "speaker owns 3D printer"
                ),
            ),
            (
                "I have some great gear: a road bike, a helmet and a GPS watch.",
                _beliefs("speaker owns road bike", "speaker owns GPS watch"),
            ),
        ),
        nothing=(
            "I don't have much gear, just the basics.",
            "I need some gear, like a tent and a stove.",
            "She has lots of gear, like a tent and a kayak.",
            "A:I've got lots of camping gear, like a tent, a stove and a kayak.",
        ),
    ),
}

SAME = [(n, s, b) for n, f in FAMILIES.items() for s, b in f.same]
NOTHING = [(n, s) for n, f in FAMILIES.items() for s in f.nothing]


def test_every_family_has_eight_sentences_or_more() -> None:
    for name, family in FAMILIES.items():
        assert len(family.same) + len(family.nothing) >= 8, name


@pytest.mark.parametrize(
    ("name", "sentence", "beliefs"), SAME, ids=[f"{n}:{s}" for n, s, _ in SAME]
)
def test_a_sentence_that_means_it_forms_exactly_its_beliefs_of_the_family(
    name: str, sentence: str, beliefs: frozenset[str]
) -> None:
    assert _of_family(sentence, FAMILIES[name]) == beliefs


@pytest.mark.parametrize(("name", "sentence"), NOTHING, ids=[f"{n}:{s}" for n, s in NOTHING])
def test_a_sentence_that_does_not_mean_it_forms_nothing_of_the_family(
    name: str, sentence: str
) -> None:
    assert _of_family(sentence, FAMILIES[name]) == set()


def test_an_umbrella_word_alone_forms_no_vague_possession() -> None:
    formed = {
        c.object.text
        for c in _batch("I've got lots of camping gear, like a tent and a stove.").candidates
    }
    assert "camping gear" not in formed and "gear" not in formed
