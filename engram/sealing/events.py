"""Seal an event of the log before it is appended; open it again where it is read.

The doors (one writer behind all of them: :class:`engram.ingest.producer.EpisodeProducer`) seal, and
every reader of ``engram.episodes`` — formation, the message indexer — opens. Sealing is a
choice of the deployment (``ENGRAM_KEYS_ENCRYPT_LOG``); opening is not: a log may hold sealed
events from before encryption was turned off, or plaintext ones from before it was turned on,
and both must read. Opening an event whose principal's key was destroyed (the principal was
forgotten) raises :class:`keys.errors.KeyDestroyed`: the caller records that it formed
nothing, which is what forgetting means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import orjson
from pydantic import ValidationError

from engram.infra.errors import EngramFailure
from engram.infra.metrics import SEALED_OPENED
from engram.keys.errors import KeyDestroyed
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.common import PSEUDONYMOUS, principal_key
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, PrincipalForgotten
from engram.schemas.episodes import MemoryRemembered, TurnAppended
from engram.schemas.log import LogEvent, OpenEvent, decode_log_event, decode_open_event
from engram.schemas.sealed import (
    SEALED_CLAIMS_CLEAR,
    SEALED_CLAIMS_FIELD,
    SEALED_FIELD,
    SealedClaimsBatch,
    SealedEvent,
)

Sealable = TurnAppended | MemoryRemembered | BeliefCorrected
"""The events that carry a person's words; deletions and forgettings carry only ids and hashes."""


class FieldCipher(Protocol):
    """Encrypts and decrypts one field under a principal's data key (:class:`keys.store.KeyStore`)."""

    async def encrypt(
        self,
        tenant: str,
        principal: str,
        event_id: str,
        field_name: str,
        plaintext: str | bytes,
        *,
        verified: bool = True,
    ) -> str: ...

    async def decrypt_bytes(
        self, tenant: str, principal: str, event_id: str, field_name: str, token: str
    ) -> bytes: ...

    async def pseudonym(self, tenant: str, principal: str, *, verified: bool = True) -> str: ...

    async def principal_of(self, tenant: str, pseudonym: str) -> str | None: ...


Named = SealedEvent | BeliefDeleted | PrincipalForgotten
"""The events of the log that name their principal in clear: by pseudonym from version 2."""


class SealedEventUnreadable(EngramFailure, ValueError):
    """A sealed event that opened but does not hold what its clear fields say."""

    code = "sealed_event_unreadable"


class SealedEventWithoutKeys(EngramFailure, LookupError):
    """A sealed event reached a process that has no key-encryption key."""

    code = "sealed_event_without_keys"

    def __init__(self, event: SealedEvent | SealedClaimsBatch) -> None:
        what = event.event_id if isinstance(event, SealedEvent) else event.batch_id
        super().__init__(
            f"event {what} of {event.tenant}/{event.principal} is encrypted, and this "
            "process has no key-encryption key: set ENGRAM_KEYS_KEK (the same as the processes "
            "that append) and restart"
        )


_CLEAR = ("event_id", "tenant", "principal", "project", "session", "occurred_at")
_CLAIMS_CLEAR = set(SEALED_CLAIMS_CLEAR)


class LogSealer:
    """Seals what a door appends (when ``seal_new``) and opens what a reader reads."""

    def __init__(self, cipher: FieldCipher, *, seal_new: bool) -> None:
        self._cipher = cipher
        self.seal_new = seal_new

    async def seal(self, event: OpenEvent, *, verified: bool = True) -> LogEvent:
        """The event as it goes on the log: sealed when it carries words and sealing is on,
        and naming its principal in clear only by pseudonym (a deletion and a forgetting carry
        no words: they stay in clear, pseudonymous). ``verified=False`` trusts a key this
        call's caller already re-read (:meth:`seal_all`)."""
        if not self.seal_new:
            return event
        if not isinstance(event, Sealable):
            pseudonym = await self._cipher.pseudonym(
                event.tenant, event.principal, verified=verified
            )
            return event.model_copy(update={"principal": pseudonym, "schema_version": PSEUDONYMOUS})
        words = await self._cipher.encrypt(
            event.tenant,
            event.principal,
            str(event.event_id),
            SEALED_FIELD,
            event.__pydantic_serializer__.to_json(event),
            verified=verified,
        )
        # encrypt has just read (or made) the key's row: its pseudonym is known
        pseudonym = await self._cipher.pseudonym(event.tenant, event.principal, verified=False)
        return sealed_as(event, words, pseudonym)

    async def keyed(self, tenant: str, principal: str) -> None:
        """Make sure the principal has a data key (and so a pseudonym) when this sealer seals:
        the key :meth:`seal` will name them by. The forgetting's door reads the key's row
        before it appends (``data_key.receipt_salt``)."""
        if self.seal_new:
            await self._cipher.pseudonym(tenant, principal)

    async def pseudonymous(self, event: LogEvent) -> LogEvent:
        """``event`` naming its principal by pseudonym in clear (what ``engram log encrypt``
        makes of a record written before pseudonyms): a sealed event keeps its words, which
        name the principal inside."""
        if not isinstance(event, Named) or event.schema_version == PSEUDONYMOUS:
            return event
        pseudonym = await self._cipher.pseudonym(event.tenant, event.principal)
        return event.model_copy(update={"principal": pseudonym, "schema_version": PSEUDONYMOUS})

    async def identify(self, event: LogEvent) -> LogEvent:
        """``event`` naming its principal again, when its clear part names a pseudonym whose key
        lives (in memory only: what readers route, order and open by); unchanged when the
        pseudonym's key was destroyed — nothing links it to anyone any more."""
        if not isinstance(event, Named) or event.schema_version != PSEUDONYMOUS:
            return event
        principal = await self._cipher.principal_of(event.tenant, event.principal)
        if principal is None:
            return event
        return event.model_copy(update={"principal": principal, "schema_version": 1})

    async def seal_all(self, events: Sequence[OpenEvent]) -> list[LogEvent]:
        """Seal one request's events, re-reading each principal's key row once per request
        rather than once per event (a request is appended at once, so the check is as fresh)."""
        checked: set[tuple[str, str]] = set()
        sealed = []
        for event in events:
            whose = (event.tenant, event.principal)
            sealed.append(await self.seal(event, verified=whose not in checked))
            checked.add(whose)
        return sealed

    async def open_words(self, event: SealedEvent) -> bytes:
        """The JSON the sealed event holds, authenticated but not decoded: for a reader that
        decodes it itself (the indexer), so it is decoded once. The cipher binds tenant,
        principal and event id; what else it says is what the reader then reads."""
        SEALED_OPENED.labels("event").inc()
        named = await self.identify(event)
        return await self._cipher.decrypt_bytes(
            named.tenant, named.principal, str(named.event_id), SEALED_FIELD, event.words
        )

    async def open(self, event: LogEvent) -> OpenEvent:
        """The event with its words readable and its principal named. Raises
        :class:`keys.errors.KeyDestroyed` when the principal was forgotten (a pseudonymous
        deletion or forgetting too: whose it was is gone with the key),
        :class:`keys.errors.CiphertextRejected` when the words were altered or moved,
        :class:`SealedEventUnreadable` when they hold another event."""
        event = await self.identify(event)
        if isinstance(event, Named) and event.schema_version == PSEUDONYMOUS:
            raise KeyDestroyed(f"the pseudonym of event {event.event_id} names no living key")
        if not isinstance(event, SealedEvent):
            return event
        SEALED_OPENED.labels("event").inc()
        plaintext = await self._cipher.decrypt_bytes(
            event.tenant, event.principal, str(event.event_id), SEALED_FIELD, event.words
        )
        return opened_as_sealed(event, plaintext)

    async def seal_claims(self, batch: ClaimsBatchFormed, *, source_sealed: bool = False) -> bytes:
        """The batch's bytes on ``engram.claims``: sealed when it carries words and sealing is
        on or the episode it was formed from was sealed (words sealed on the log never land in
        clear on the claims topic, whatever this worker's own setting) — a deletion's or a
        forgetting's batch carries only hashes and ids and stays in clear, so it still projects
        (and destroys the key) after the key is gone."""
        return (await self.seal_claims_record(batch, source_sealed=source_sealed))[1]

    async def seal_claims_record(
        self, batch: ClaimsBatchFormed, *, source_sealed: bool = False
    ) -> tuple[bytes, bytes]:
        """The batch's record on ``engram.claims``, key and value (:meth:`seal_claims`): when
        sealed, or when sealing is on, the key and the clear fields name the principal by
        pseudonym — one principal's batches still share a key, so a partition and an order."""
        whole = batch.__pydantic_serializer__.to_json(batch)
        if not (self.seal_new or source_sealed):
            return principal_key(batch.tenant, batch.principal), whole
        pseudonym = await self._cipher.pseudonym(batch.tenant, batch.principal, verified=False)
        key = principal_key(batch.tenant, pseudonym)
        if not carries_words(batch):
            correction = batch.correction
            assert correction is not None  # a batch without words is a deletion's or forgetting's
            named = correction.model_copy(
                update={"principal": pseudonym, "schema_version": PSEUDONYMOUS}
            )
            unworded = batch.model_copy(
                update={
                    "principal": pseudonym,
                    "schema_version": PSEUDONYMOUS,
                    "correction": named,
                }
            )
            return key, unworded.__pydantic_serializer__.to_json(unworded)
        words = await self._cipher.encrypt(
            batch.tenant,
            batch.principal,
            str(batch.batch_id),
            SEALED_CLAIMS_FIELD,
            whole,
            verified=False,
        )
        # The whole batch is sealed (its words and the clear fields beside them: one encryption
        # and no JSON surgery on formation's hot path); the clear copy is a handful of fields.
        # Built from a valid batch, so valid by construction (tests/unit/test_sealing.py
        # validates it with the contract's model); validating again would cost a second pass.
        clear = batch.model_dump(mode="json", include=_CLAIMS_CLEAR)
        return key, orjson.dumps(
            {
                **clear,
                "schema_version": PSEUDONYMOUS,
                "principal": pseudonym,
                "type": "claims.sealed",
                "words": words,
            }
        )

    async def open_claims(self, sealed: SealedClaimsBatch) -> bytes:
        """A sealed batch (decoded by its contract) opened into the clear batch's bytes
        (decode them with the contract); one whose key was destroyed (the principal was
        forgotten) opens as a batch that formed nothing, keeping its clear fields so the
        projector records it and the watermarks pass it."""
        SEALED_OPENED.labels("claims").inc()
        principal = sealed.principal
        if sealed.schema_version == PSEUDONYMOUS:
            found = await self._cipher.principal_of(sealed.tenant, sealed.principal)
            if found is None:
                return formed_nothing(sealed)
            principal = found
        try:
            return await self._cipher.decrypt_bytes(
                sealed.tenant,
                principal,
                str(sealed.batch_id),
                SEALED_CLAIMS_FIELD,
                sealed.words,
            )
        except KeyDestroyed:
            return formed_nothing(sealed)

    async def identify_claims(self, batch: ClaimsBatchFormed) -> ClaimsBatchFormed:
        """A clear batch (a deletion's or a forgetting's) naming its principal again, when it
        names them by pseudonym and their key lives; once the key is gone, a batch that formed
        nothing, for nobody anyone can name (its clear fields kept for the watermarks)."""
        if batch.schema_version != PSEUDONYMOUS:
            return batch
        principal = await self._cipher.principal_of(batch.tenant, batch.principal)
        if principal is None:
            return batch.model_copy(update={"correction": None, "schema_version": 1})
        correction = batch.correction
        if correction is not None:
            correction = correction.model_copy(update={"principal": principal, "schema_version": 1})
        return batch.model_copy(
            update={"principal": principal, "schema_version": 1, "correction": correction}
        )


def formed_nothing(sealed: SealedClaimsBatch) -> bytes:
    """The clear batch of a sealed one whose words are gone: its clear fields, no claims."""
    clear = sealed.model_dump(mode="json", exclude={"type", "words", "schema_version"})
    return orjson.dumps(
        {**clear, "type": "claims.formed", "candidates": [], "refusals": [], "correction": None}
    )


def sealed_as(event: Sealable, words: str, pseudonym: str | None = None) -> SealedEvent:
    """``event`` as a sealed event holding ``words``: its routing fields in clear, naming the
    principal by ``pseudonym`` when given (version 2), else by name (version 1)."""
    return SealedEvent(
        schema_version=1 if pseudonym is None else PSEUDONYMOUS,
        event_id=event.event_id,
        tenant=event.tenant,
        principal=event.principal if pseudonym is None else pseudonym,
        project=event.project,
        session=event.session,
        occurred_at=event.occurred_at,
        sealed_type=event.type,
        words=words,
    )


def words_on_log(event: LogEvent) -> Literal["clear", "sealed", "none"]:
    """How ``event`` holds a person's words where it lies on the log: in clear, sealed under
    their data key, or not at all (a deletion or a forgetting carries ids and hashes)."""
    if isinstance(event, SealedEvent):
        return "sealed"
    return "clear" if isinstance(event, Sealable) else "none"


def is_sealed_event(raw: bytes) -> bool:
    """Whether ``raw`` is a sealed event of the log (ciphertext, safe to keep anywhere)."""
    if b'"sealed"' not in raw:
        return False
    try:
        return isinstance(decode_log_event(raw), SealedEvent)
    except ValidationError:
        return False


def carries_words(batch: ClaimsBatchFormed) -> bool:
    return batch.correction is None or isinstance(batch.correction, BeliefCorrected)


def opened_as_sealed(event: SealedEvent, plaintext: bytes | str) -> OpenEvent:
    """The event inside ``event``, checked against its clear fields: the cipher binds tenant,
    principal and event id; project, session, time and type are compared here, so a reader
    never routes by one value and forms from another."""
    try:
        inner = decode_open_event(plaintext)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "value"
        raise SealedEventUnreadable(
            f"sealed event {event.event_id} holds no valid event: {where}: {first['msg']}"
        ) from None
    if inner.type != event.sealed_type:
        raise SealedEventUnreadable(
            f"sealed event {event.event_id} says it holds {event.sealed_type!r} and holds "
            f"{inner.type!r}"
        )
    differing = [name for name in _CLEAR if getattr(inner, name) != getattr(event, name)]
    if differing:
        raise SealedEventUnreadable(
            f"sealed event {event.event_id}'s clear fields differ from what it holds: "
            + ", ".join(differing)
        )
    return inner


class NoKeys:
    """The opener of a process without a key-encryption key: plaintext passes, sealed events
    fail with a message that says how to fix it."""

    seal_new = False

    async def seal(self, event: OpenEvent, *, verified: bool = True) -> LogEvent:
        return event

    async def keyed(self, tenant: str, principal: str) -> None:
        return None  # it seals nothing, so it makes no key

    async def identify(self, event: LogEvent) -> LogEvent:
        return event

    async def identify_claims(self, batch: ClaimsBatchFormed) -> ClaimsBatchFormed:
        return batch

    async def open(self, event: LogEvent) -> OpenEvent:
        if isinstance(event, SealedEvent):
            raise SealedEventWithoutKeys(event)
        return event

    async def open_words(self, event: SealedEvent) -> bytes:
        raise SealedEventWithoutKeys(event)

    async def seal_claims(self, batch: ClaimsBatchFormed, *, source_sealed: bool = False) -> bytes:
        return batch.__pydantic_serializer__.to_json(batch)  # it opened no sealed source

    async def seal_claims_record(
        self, batch: ClaimsBatchFormed, *, source_sealed: bool = False
    ) -> tuple[bytes, bytes]:
        return principal_key(batch.tenant, batch.principal), await self.seal_claims(batch)

    async def open_claims(self, sealed: SealedClaimsBatch) -> bytes:
        raise SealedEventWithoutKeys(sealed)

    async def seal_all(self, events: Sequence[OpenEvent]) -> list[LogEvent]:
        return list(events)


Sealer = LogSealer | NoKeys
