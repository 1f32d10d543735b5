"""Hostile and random input through the door and the formation core: nothing crashes, every
record is accounted for (an episode's batch, or a dead letter with its reason), and every cited
span is the message's own bytes.

Pure (no services): the decoder at the door (``engram.streams.dead_letters.admit_record``) and the
formation stage with the deterministic extractor, fed raw bytes. Hypothesis drives it; the
example count comes from the profile — ``ENGRAM_FUZZ_EXAMPLES`` (``make fuzz`` runs 10,000 per
property), a few hundred in the ordinary test run.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.formation.spans import quote_at
from engram.policies.in_force import default_policy
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.episodes import episode_messages
from engram.schemas.sealed import SealedEvent
from engram.streams.dead_letters import DeadLetter, DeadLetterReason, admit_record
from engram.streams.formation_stage import FormationStage

pytestmark = pytest.mark.fuzz

EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=EXAMPLES <= 200,
)
MAX_BYTES = 1 << 20
STAGE = FormationStage(default_policy())
SOURCE = SourcePosition(topic="fuzz", partition=0, offset=0)

HOSTILE_TEXT = st.one_of(
    st.text(max_size=400),
    st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zs", "Mn"]), max_size=200),
    st.sampled_from(
        [
            "I live in \u202eLisbon\u202c and I use Vim.",
            "My name is Ana\u200d\u200dLima. I prefer tea\u0000.",
            "أنا أعيش في القاهرة. I live in Cairo.",
            "I live in Zürich 🏔️ and I have a 🐈 called Miso.",
            "Remember that I live in Lisbon. " * 200,
            "I have " + "a car and " * 300 + "a bike.",
            "My password is hunter2 and my card is 4111 1111 1111 1111.",
            '<thinking>I live in Moscow</thinking> "I work at Acme," she said.',
        ]
    ),
    st.builds(
        lambda word, n: (word + " ") * n,
        st.sampled_from(["I", "my", "we", "."]),
        st.integers(1, 2000),
    ),
)
ROLES = st.sampled_from(["user", "assistant", "tool", "system"])


@st.composite
def episodes(draw: st.DrawFn) -> dict[str, object]:
    messages = draw(
        st.lists(
            st.fixed_dictionaries({"role": ROLES, "content": HOSTILE_TEXT}), min_size=1, max_size=8
        )
    )
    return {
        "schema_version": 1,
        "type": "turn.appended",
        "event_id": str(uuid.UUID(int=draw(st.integers(0, 2**128 - 1)))),
        "tenant": "t",
        "principal": "ana",
        "project": "p",
        "session": "s",
        "occurred_at": "2026-11-01T10:00:00Z",
        "messages": [{"ordinal": i, **m} for i, m in enumerate(messages)],
    }


def _json_mutations() -> st.SearchStrategy[object]:
    """Valid-looking JSON that breaks the contract: wrong types, missing and unknown fields,
    deep nesting, huge numbers."""
    nested = st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=40,
    )
    return st.one_of(
        nested,
        episodes().map(lambda e: {**e, "messages": []}),
        episodes().map(lambda e: {**e, "tenant": "no/slash"}),
        episodes().map(lambda e: {**e, "type": "belief.deleted"}),
        episodes().map(lambda e: {**e, "extra": [[[[[]]]]]}),
        episodes().map(lambda e: {k: v for k, v in e.items() if k != "occurred_at"}),
    )


RAW = st.one_of(
    episodes().map(orjson.dumps),
    # The standard library writes integers of any size: huge numbers are hostile input too.
    _json_mutations().map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=600),
    st.binary(max_size=200).map(lambda b: b"\xff\xfe" + b),
)


def _form(raw: bytes) -> ClaimsBatchFormed | DeadLetter:
    admitted = admit_record(raw, max_bytes=MAX_BYTES)
    if isinstance(admitted, DeadLetter):
        return admitted
    assert not isinstance(admitted, SealedEvent), "random bytes cannot authenticate as sealed"
    return asyncio.run(STAGE.form(admitted, SOURCE))


def _assert_accounted(raw: bytes, outcome: ClaimsBatchFormed | DeadLetter) -> None:
    if isinstance(outcome, DeadLetter):
        assert outcome.reason in DeadLetterReason and outcome.detail
        return
    counts = outcome.counts
    assert counts.proposed == counts.admitted + counts.refused + counts.overflow
    admitted = admit_record(raw, max_bytes=MAX_BYTES)
    assert not isinstance(admitted, DeadLetter)
    contents = {m.ordinal: m.content for m in episode_messages(admitted)}  # type: ignore[arg-type]
    for candidate in outcome.candidates:
        content = contents[candidate.message_ordinal]
        assert quote_at(content, candidate.span_start, candidate.span_end) == candidate.quote
        assert 0 <= candidate.span_start < candidate.span_end <= len(content.encode())


@FUZZ
@given(RAW)
def test_any_bytes_become_a_batch_or_a_dead_letter_with_a_reason(raw: bytes) -> None:
    _assert_accounted(raw, _form(raw))


@FUZZ
@given(episodes())
def test_a_valid_episode_always_forms_and_cites_its_own_bytes(episode: dict[str, object]) -> None:
    """Valid: any text the contract stores (every code point but NUL; hypothesis draws no
    lone surrogates). One with a NUL is a dead letter that names the field, never a crash."""
    raw = orjson.dumps(episode)
    outcome = _form(raw)
    if "\\u0000" in raw.decode():
        assert isinstance(outcome, DeadLetter) and outcome.reason is DeadLetterReason.CONTRACT
        assert "content" in outcome.detail and "U+0000" in outcome.detail
        return
    assert isinstance(outcome, ClaimsBatchFormed)
    _assert_accounted(raw, outcome)


def test_an_oversized_record_is_a_dead_letter_not_a_crash() -> None:
    raw = orjson.dumps({"blob": "x" * (MAX_BYTES + 1)})
    outcome = _form(raw)
    assert isinstance(outcome, DeadLetter) and outcome.reason is DeadLetterReason.OVERSIZED


def _turn(*contents: str) -> bytes:
    messages = [{"ordinal": i, "role": "user", "content": c} for i, c in enumerate(contents)]
    return orjson.dumps(
        {
            "schema_version": 1,
            "type": "turn.appended",
            "event_id": str(uuid.uuid4()),
            "tenant": "t",
            "principal": "ana",
            "project": "p",
            "session": "s",
            "occurred_at": "2026-11-01T10:00:00Z",
            "messages": messages,
        }
    )


def test_ten_thousand_messages_in_one_episode_are_refused_at_the_door() -> None:
    outcome = _form(_turn(*["I live in Lisbon."] * 10_000))
    assert isinstance(outcome, DeadLetter) and outcome.reason is DeadLetterReason.CONTRACT
    assert "messages" in outcome.detail


def test_a_one_mebibyte_message_is_refused_at_the_door_with_its_field() -> None:
    outcome = _form(_turn("I live in Lisbon. " * 58_000))
    assert isinstance(outcome, DeadLetter) and "content" in outcome.detail
