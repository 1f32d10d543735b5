"""Sealing and opening the log's events with the real field cipher and fixed keys: no I/O."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from engram.keys.cipher import DataKey, decrypt_bytes, encrypt_field
from engram.keys.errors import CiphertextRejected, KeyDestroyed
from engram.schemas.claims import decode_claims_batch
from engram.schemas.corrections import PrincipalForgotten
from engram.schemas.log import decode_log_event
from engram.schemas.sealed import (
    SEALED_TOKEN_PATTERN,
    SealedClaimsBatch,
    SealedEvent,
    check_sealed_token,
    is_sealed_claims,
)
from engram.sealing.events import (
    LogSealer,
    NoKeys,
    SealedEventUnreadable,
    SealedEventWithoutKeys,
    is_sealed_event,
    words_on_log,
)
from tests.support.forming import WHEN, episode, form, proposal


class FixedKeys:
    """One data key per principal, held in memory; ``destroyed`` ones raise as the store does."""

    def __init__(self) -> None:
        self.keys: dict[tuple[str, str], DataKey] = {}
        self.destroyed: set[tuple[str, str]] = set()
        self.verified_writes = 0

    def _key(self, tenant: str, principal: str) -> DataKey:
        if (tenant, principal) in self.destroyed:
            raise KeyDestroyed(f"the data key of {tenant}/{principal} was destroyed")
        return self.keys.setdefault(
            (tenant, principal), DataKey(f"k-{principal}", bytes(range(32)))
        )

    async def encrypt(
        self,
        tenant: str,
        principal: str,
        event_id: str,
        field_name: str,
        plaintext: str | bytes,
        *,
        verified: bool = True,
    ) -> str:
        self.verified_writes += verified
        key = self._key(tenant, principal)
        return encrypt_field(key, tenant, principal, event_id, field_name, plaintext)

    async def decrypt_bytes(
        self, tenant: str, principal: str, event_id: str, field_name: str, token: str
    ) -> bytes:
        return decrypt_bytes(
            self._key(tenant, principal), tenant, principal, event_id, field_name, token
        )

    async def pseudonym(self, tenant: str, principal: str, *, verified: bool = True) -> str:
        self._key(tenant, principal)
        return f"psn-{principal}"

    async def principal_of(self, tenant: str, pseudonym: str) -> str | None:
        principal = pseudonym.removeprefix("psn-")
        known = (tenant, principal) in self.keys and (tenant, principal) not in self.destroyed
        return principal if known else None


T = TypeVar("T")

SAID = "I live in Zanzibar and my password is hunter2"


def _run(awaitable: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(awaitable)


def test_a_sealed_turn_keeps_ids_in_clear_hides_its_words_and_opens_to_itself() -> None:
    keys = FixedKeys()
    sealer = LogSealer(keys, seal_new=True)
    turn = episode(SAID)
    sealed = _run(sealer.seal(turn))
    assert isinstance(sealed, SealedEvent)
    wire = sealed.model_dump_json().encode()
    assert b"Zanzibar" not in wire and b"hunter2" not in wire
    assert is_sealed_event(wire)
    assert (sealed.tenant, sealed.principal, sealed.event_id, sealed.schema_version) == (
        turn.tenant,
        "psn-ada",  # the principal's pseudonym: their name is only inside the sealed words
        turn.event_id,
        2,
    )
    assert b'"ada"' not in wire
    assert _run(sealer.open(decode_log_event(wire))) == turn


def test_with_sealing_off_the_doors_append_plaintext_and_readers_still_open_sealed() -> None:
    keys = FixedKeys()
    turn = episode(SAID)
    assert _run(LogSealer(keys, seal_new=False).seal(turn)) is turn
    sealed = _run(LogSealer(keys, seal_new=True).seal(turn))
    assert _run(LogSealer(keys, seal_new=False).open(sealed)) == turn


def test_words_moved_to_another_principal_or_altered_do_not_open() -> None:
    keys = FixedKeys()
    sealer = LogSealer(keys, seal_new=True)
    sealed = _run(sealer.seal(episode(SAID)))
    assert isinstance(sealed, SealedEvent)
    keys.keys[("t", "bo")] = keys._key("t", "ada")
    moved = sealed.model_copy(update={"principal": "bo"})
    with pytest.raises(CiphertextRejected):
        _run(sealer.open(moved))
    other_time = sealed.model_copy(update={"occurred_at": WHEN.replace(year=2030)})
    with pytest.raises(SealedEventUnreadable, match="occurred_at"):
        _run(sealer.open(other_time))


def test_a_forgotten_principals_sealed_words_raise_key_destroyed() -> None:
    keys = FixedKeys()
    sealer = LogSealer(keys, seal_new=True)
    sealed = _run(sealer.seal(episode(SAID)))
    keys.destroyed.add(("t", "ada"))
    with pytest.raises(KeyDestroyed):
        _run(sealer.open(sealed))


def test_one_request_re_reads_each_principals_key_once() -> None:
    keys = FixedKeys()
    turns = [episode(SAID, event=n) for n in range(1, 5)]
    turns.append(episode(SAID, event=9, principal="bo"))
    sealed = _run(LogSealer(keys, seal_new=True).seal_all(turns))
    assert all(isinstance(e, SealedEvent) for e in sealed)
    assert keys.verified_writes == 2


def test_a_sealed_claims_batch_is_valid_by_the_contract_and_opens_to_the_batch() -> None:
    keys = FixedKeys()
    sealer = LogSealer(keys, seal_new=True)
    batch = form(
        episode("I live in Zanzibar."), proposal(quote="I live in Zanzibar", obj="Zanzibar")
    )
    assert batch.candidates
    raw = _run(sealer.seal_claims(batch))
    assert b"Zanzibar" not in raw and is_sealed_claims(raw)
    sealed = SealedClaimsBatch.model_validate_json(raw)
    assert decode_claims_batch(_run(sealer.open_claims(sealed))) == batch


def test_a_forgotten_principals_sealed_batch_opens_as_one_that_formed_nothing() -> None:
    keys = FixedKeys()
    sealer = LogSealer(keys, seal_new=True)
    batch = form(
        episode("I live in Zanzibar."), proposal(quote="I live in Zanzibar", obj="Zanzibar")
    )
    raw = _run(sealer.seal_claims(batch))
    keys.destroyed.add(("t", "ada"))
    opened = decode_claims_batch(
        _run(sealer.open_claims(SealedClaimsBatch.model_validate_json(raw)))
    )
    assert (opened.candidates, opened.refusals, opened.correction) == ([], [], None)
    assert (opened.batch_id, opened.source, opened.episode_id) == (
        batch.batch_id,
        batch.source,
        batch.episode_id,
    )


def _ada_forgotten() -> PrincipalForgotten:
    return PrincipalForgotten(
        event_id=uuid.UUID(int=7),
        tenant="t",
        principal="ada",
        project="p",
        session="s",
        occurred_at=WHEN,
    )


def test_events_without_words_stay_in_clear() -> None:
    sealer = LogSealer(FixedKeys(), seal_new=True)
    forgotten = _ada_forgotten()
    on_log = _run(sealer.seal(forgotten))
    assert isinstance(on_log, PrincipalForgotten)
    assert (on_log.principal, on_log.schema_version) == ("psn-ada", 2)  # pseudonymous, in clear
    assert on_log.model_copy(update={"principal": "ada", "schema_version": 1}) == forgotten
    assert _run(sealer.open(decode_log_event(on_log.model_dump_json()))) == forgotten


def test_a_forgotten_pseudonym_names_nobody() -> None:
    """Once the key is destroyed, a pseudonymous record opens as destroyed: no reader can say
    whose it was, and a sealed batch of theirs projects as one that formed nothing."""
    keys = FixedKeys()
    sealer = LogSealer(keys, seal_new=True)
    forgotten = _ada_forgotten()
    on_log = decode_log_event(_run(sealer.seal(forgotten)).model_dump_json())
    sealed_turn = decode_log_event(_run(sealer.seal(episode(SAID))).model_dump_json())
    keys.destroyed.add(("t", "ada"))
    for event in (on_log, sealed_turn):
        assert _run(sealer.identify(event)) == event
        with pytest.raises(KeyDestroyed):
            _run(sealer.open(event))


def test_a_process_without_keys_passes_plaintext_and_says_how_to_read_sealed() -> None:
    turn = episode(SAID)
    assert _run(NoKeys().open(turn)) is turn
    sealed = _run(LogSealer(FixedKeys(), seal_new=True).seal(turn))
    with pytest.raises(SealedEventWithoutKeys, match="ENGRAM_KEYS_KEK"):
        _run(NoKeys().open(sealed))


_TOKEN_CHARACTERS = st.sampled_from(list("v1.AZaz09_-+/= é\n"))


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(_TOKEN_CHARACTERS, max_size=40),
        st.builds(
            lambda key, nonce, body, tail: f"v1.{key}.{nonce}.{body}{tail}",
            st.text(_TOKEN_CHARACTERS, max_size=70),
            st.text(_TOKEN_CHARACTERS, max_size=4),
            st.text(_TOKEN_CHARACTERS, max_size=8),
            st.sampled_from(["", "\n", ".", "="]),
        ),
    )
)
def test_the_sealed_token_check_is_its_exported_pattern(words: str) -> None:
    """The contract's check of an encrypted field (C string operations, for speed) accepts
    exactly what the pattern the JSON Schemas publish accepts."""
    assert (re.fullmatch(SEALED_TOKEN_PATTERN, words) is not None) == _token_passes(words)


def _token_passes(words: str) -> bool:
    try:
        check_sealed_token(words)
    except PydanticCustomError:
        return False
    return True


def test_a_real_token_and_a_key_id_of_64_pass_and_of_65_does_not() -> None:
    token = _run(LogSealer(FixedKeys(), seal_new=True).seal(episode(SAID)))
    assert isinstance(token, SealedEvent) and _token_passes(token.words)
    assert _token_passes("v1." + "k" * 64 + ".n.c")
    assert not _token_passes("v1." + "k" * 65 + ".n.c")
    with pytest.raises(ValidationError, match="an encrypted field must match"):
        SealedEvent.model_validate({**token.model_dump(), "words": token.words + "+"})


def test_a_batch_formed_from_a_sealed_episode_is_sealed_whatever_the_workers_own_setting() -> None:
    batch = form(
        episode("I live in Zanzibar."), proposal(quote="I live in Zanzibar", obj="Zanzibar")
    )
    not_sealing = LogSealer(FixedKeys(), seal_new=False)
    assert b"Zanzibar" in _run(not_sealing.seal_claims(batch))  # a plaintext episode's batch
    raw = _run(not_sealing.seal_claims(batch, source_sealed=True))
    assert b"Zanzibar" not in raw and is_sealed_claims(raw)


def test_how_an_event_holds_words_on_the_log() -> None:
    plain = episode(SAID)
    assert words_on_log(plain) == "clear"
    assert words_on_log(_run(LogSealer(FixedKeys(), seal_new=True).seal(plain))) == "sealed"
