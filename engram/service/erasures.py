"""Erasure receipts, as every door answers them: what a deletion or a forgetting erased, where,
and where the words still are.

The projector counted what it removed when it applied the event (``erasure_receipt``,
:mod:`engram.projections.beliefs.receipts`); this turns that row into the receipt people read — the
tables in words, the data key, and the episodic log's part, which depends on how the episodes
lie there: sealed under a key that is now destroyed (unreadable from now on), or in clear until
the topic's retention removes them. It never says "nothing remains" while the log holds them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import asyncpg
import orjson

from engram.infra.settings import KafkaSettings
from engram.ingest.topics import topic_retention_ms
from engram.projections.reads.erasures import erasure_row, wait_for_erasure
from engram.schemas.receipts import DataKeyFate, ErasedRows, ErasureReceipt, LogFate, LogState

Row = Mapping[str, Any]
"""An ``erasure_receipt`` row."""

TABLE_WORDS = {
    "belief": "beliefs (current and past values)",
    "evidence": "evidence: the quotes beliefs cited",
    "refusal": "refused proposals and their quotes",
    "belief_rejection": "corrections (their words)",
    "belief_tombstone": "tombstones of deleted beliefs",
    "consolidation_run": "formation runs",
    "entity": "entities: the names beliefs used",
    "memory_event_outbox": "memory events (ids)",
    "memory_event_pending": "memory events waiting to be published (ids)",
    "claims_history": "kept claims batches: formation's output, with quotes",
    "message": "messages in the index recall searches",
    "message_hidden": "markers of messages kept out of the index (ids)",
    "message_term": "search postings: the words of indexed messages",
    "message_term_stats": "search statistics per word",
    "message_scope_stats": "search statistics per scope",
    "embedding_vector": "vectors made from messages and beliefs",
    "model_receipt": "a model's answers about messages",
    "model_attempt": "the audit of model calls (digests and counts)",
    "session_message": "session messages kept as a model's context",
    "api_token": "API tokens (hashes)",
    "ui_session": "the inspector's sessions showing them",
    "erasure_receipt": "receipts of earlier deletions of their beliefs",
}


def describe_retention(retention_ms: int | None) -> str:
    if retention_ms is None:
        return "unknown (the broker could not be asked)"
    if retention_ms < 0:
        return "forever"
    hours = retention_ms / 3_600_000
    amount, unit = (hours / 24, "day") if hours >= 24 else (hours, "hour")
    return f"{amount:g} {unit}" + ("" if amount == 1 else "s")


def _until(retention: str) -> str:
    if retention == "forever":
        return "for as long as the topic is kept, which is forever"
    if retention.startswith("unknown"):
        return "until the topic's retention removes them (the broker could not be asked how long)"
    return f"until the topic's retention ({retention}) removes them"


def log_state(sealed: int, clear: int, unknown: int) -> LogState:
    if not sealed and not clear and not unknown:
        return "not_in_log"
    if not clear and not unknown:
        return "sealed"
    if clear and not sealed and not unknown:
        return "in_clear"
    return "unknown" if unknown and not clear and not sealed else "partly_in_clear"


def _why_clear(clear: int, after_sealed: int) -> str:
    """Why ``clear`` episodes are in clear, from where they lie on the log: those after a sealed
    episode of their partition were written while the log was encrypted, by a producer that
    wrote straight to the topic (Engram's doors seal every episode while encryption is on)."""
    before = clear - after_sealed
    said = []
    if before:
        said.append(
            f"{before} of them were appended while the log was not encrypted "
            "(before any sealed episode of their partition)"
        )
    if after_sealed:
        said.append(
            f"{after_sealed} of them were written straight to the topic by a producer other than "
            "Engram's doors while the log was encrypted (after sealed episodes of their "
            "partition; every Engram door seals while ENGRAM_KEYS_ENCRYPT_LOG is on): have that "
            "producer send through the API, `engram ingest` or the Python client"
        )
    return "; ".join(said) + "."


def _log_says(row: Row, topic: str, retention: str) -> str:
    sealed, clear = row["episodes_sealed"], row["episodes_in_clear"]
    unknown, forgetting = row["episodes_unknown"], row["kind"] == "principal.forgotten"
    if not sealed and not clear and not unknown:
        return f"No episode in {topic} held these words."
    parts = []
    if sealed and forgetting:
        key = "which this forgetting destroyed" if row["data_key_id"] else "which no longer exists"
        parts.append(
            f"{sealed} episode(s) in {topic}, and their claims batches, are sealed under the data "
            f"key {key}: unreadable from now on in the log, its copies and its backups, to "
            f"anyone without a database backup taken before {row['applied_at']:%Y-%m-%d %H:%M} "
            "UTC. Such a backup still holds the data key, wrapped by the key-encryption key "
            "(KEK) in use then, and with that KEK it opens the words in any copy of the log: "
            "they die in those backups once that KEK is rotated away (`engram keys rotate`) "
            'and destroyed, or once the backups themselves are (docs/privacy.md, "Backups '
            'that die with their keys").'
        )
    elif sealed:
        parts.append(
            f"The {sealed} episode(s) in {topic} that said it stay there sealed under the "
            "principal's data key: readable only with Engram's keys, until the principal is "
            "forgotten (which destroys the key)."
        )
    if clear:
        parts.append(
            f"{clear} episode(s) stay in {topic} in clear, readable by whoever reads the topic, "
            f"{_until(retention)}: {_why_clear(clear, row.get('episodes_in_clear_after_sealed', 0))}"
            " An operator copies the log sealed with `engram log encrypt` (docs/privacy.md)."
        )
    if unknown:
        parts.append(
            f"{unknown} episode(s) were read before Engram recorded whether they were sealed: "
            f"treat them as readable in {topic} {_until(retention)}."
        )
    return " ".join(parts)


def _kept(kind: str) -> list[str]:
    if kind == "principal.forgotten":
        return [
            "A SHA-256 of tenant/principal (the principal tombstone), so nothing said before or "
            "after forms again: anyone who knows the name can compute it, and it names no record "
            "of the log, where they were named by a pseudonym deleted with their data key.",
            "The formation backlog's entries of their episodes, without whose they were: the "
            "watermarks are computed from them.",
        ]
    return [
        "A SHA-256 of the belief's content (its tombstone), so it never forms again; "
        "corrections of it keep their kind and hash."
    ]


def _headline(row: Row, principal: str, total: int) -> str:
    if row["kind"] == "principal.forgotten":
        if row["already"]:
            return f"{principal} was forgotten already: nothing was left to erase."
        key = ", and their data key destroyed" if row["data_key_id"] else ""
        return f"Forgotten: {total} row(s) about {principal} deleted from PostgreSQL{key}."
    if row["already"]:
        return f"Belief {row['belief_id']} was deleted already: nothing was left to erase."
    return f"Deleted: belief {row['belief_id']}; {total} row(s) deleted or scrubbed in PostgreSQL."


def build_receipt(
    row: Row, *, principal: str, topic: str, retention_ms: int | None
) -> ErasureReceipt:
    """The receipt of one ``erasure_receipt`` row, for the principal it names (by hash)."""
    erased_json = row["erased"]
    counts: dict[str, int] = (
        orjson.loads(erased_json) if isinstance(erased_json, str | bytes) else dict(erased_json)
    )
    erased = [
        ErasedRows(table=table, what=TABLE_WORDS.get(table, table), rows=rows)
        for table, rows in sorted(counts.items())
    ]
    retention = describe_retention(retention_ms)
    sealed, clear, unknown = (
        row["episodes_sealed"],
        row["episodes_in_clear"],
        row["episodes_unknown"],
    )
    log = LogFate(
        state=log_state(sealed, clear, unknown),
        topic=topic,
        episodes_sealed=sealed,
        episodes_in_clear=clear,
        episodes_unknown=unknown,
        retention=retention,
        says=_log_says(row, topic, retention),
    )
    kept = _kept(row["kind"])
    return ErasureReceipt(
        event_id=row["event_id"],
        kind=row["kind"],
        tenant=row["tenant"],
        principal=principal,
        belief_id=row["belief_id"],
        requested_at=row["requested_at"],
        applied_at=row["applied_at"],
        already=row["already"],
        erased=erased,
        data_key=DataKeyFate(destroyed=row["data_key_id"] is not None),
        log=log,
        kept=kept,
        says=[_headline(row, principal, sum(counts.values())), log.says, *kept],
    )


class Erasures:
    """Receipts of this deployment's erasures, read from the projection and the broker."""

    def __init__(self, pool: asyncpg.Pool, kafka: KafkaSettings) -> None:
        self._pool = pool
        self._kafka = kafka

    async def receipt(
        self, *, event_id: uuid.UUID, tenant: str, principal: str, timeout_s: float = 0.0
    ) -> ErasureReceipt | None:
        """The receipt once the erasure has applied (waiting up to ``timeout_s`` for it); None
        if it has not, or was never this principal's."""
        if timeout_s > 0:
            row = await wait_for_erasure(
                self._pool,
                event_id=event_id,
                tenant=tenant,
                principal=principal,
                timeout_s=timeout_s,
            )
        else:
            row = await erasure_row(
                self._pool, event_id=event_id, tenant=tenant, principal=principal
            )
        if row is None:
            return None
        topic = self._kafka.episodes_topic
        retention = await topic_retention_ms(self._kafka, topic)
        return build_receipt(row, principal=principal, topic=topic, retention_ms=retention)
