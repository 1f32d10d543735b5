"""The index of messages: each message of each turn on the log, as a row PostgreSQL can search.

:func:`entry_of` is the pure part — what one log record says to the index, decoded once for
every sink of the log follower — and :func:`write_index` writes a batch of them inside the
index sink's transaction (:mod:`engram.projections.messages.indexer`), which also stores the offset
(``projector_offset`` under :data:`INDEXER`): a killed follower neither loses nor doubles a
message, and a replay into emptied tables rebuilds the same rows. It writes every role;
readers choose (recall answers with the principal's own words unless asked for others).

What the index must not hold: the messages a deleted belief quoted (``message_hidden``, written
by the projector's deletion, :func:`hide_messages`) and every message of a forgotten principal
(their ``principal_tombstone``; a ``principal.forgotten`` record in the log also empties what
the index holds of them at that point). Both writers take the principal's lock first
(:mod:`engram.projections.principal_lock`), so a message indexed after its deletion is left out and
one indexed before it is deleted with it.

Beside each message the same statements keep what Okapi BM25 reads (migration 0027, read by
:mod:`engram.projections.messages.lexical`): its postings (one row per lexeme) and the principal's counts per
role and project, added when a message is inserted and taken away when it is deleted;
:func:`recount_stats` counts them again from ``message``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

import asyncpg
from pydantic import ValidationError

from engram.projections.erased import deleted_rows, note_erased
from engram.projections.following import Batch, Tracking, write_tracked
from engram.projections.messages.embeddings import store as embedding_store
from engram.projections.principal_lock import lock_principals
from engram.resolution.ordering import deleted_hashes, principal_of, redact
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.corrections import PrincipalForgotten
from engram.schemas.episodes import MemoryRemembered, TurnAppended, episode_messages
from engram.schemas.log import decode_log_event

INDEXER = "messages"
"""The index's name in ``projector_offset`` (the belief projector's is ``beliefs``)."""

INDEX_TRACKING = Tracking(INDEXER)
"""Where the index stores its offsets: the generation's ``projector_offset``."""


class MessageKey(NamedTuple):
    tenant: str
    principal: str
    episode_id: uuid.UUID
    message_ordinal: int


@dataclass(frozen=True, slots=True)
class MessageRow:
    tenant: str
    principal: str
    project: str
    session: str
    episode_id: uuid.UUID
    message_ordinal: int
    role: str
    author: str | None
    content: str
    occurred_at: datetime
    source_partition: int
    source_offset: int


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One record of ``engram.episodes`` as the indexer reads it: where it is, and its bytes."""

    partition: int
    offset: int
    value: bytes


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One record of ``engram.episodes`` as the messages wing reads it, decoded (and opened)
    once for every sink of the log follower: where it is, the messages it adds and the
    principal it forgets (``principal.forgotten``)."""

    partition: int
    offset: int
    rows: tuple[MessageRow, ...] = ()
    forgets: tuple[str, str] | None = None


@dataclass
class IndexChanges:
    """What a run of records does to the index: messages to add, principals forgotten."""

    rows: list[MessageRow]
    forgotten: list[tuple[str, str]]


def entry_of(record: LogRecord) -> LogEntry:
    """What one record says to the index: every message of a turn or remembered memory, or
    the principal a forgetting names. A record that is not a valid log event adds nothing:
    formation dead-letters it, and the index has nothing to say about it."""
    try:
        event = decode_log_event(record.value)
    except ValidationError:
        return LogEntry(record.partition, record.offset)
    match event:
        case TurnAppended() | MemoryRemembered():
            return LogEntry(record.partition, record.offset, rows=tuple(_rows(event, record)))
        case PrincipalForgotten():
            return LogEntry(
                record.partition, record.offset, forgets=(event.tenant, event.principal)
            )
        case _:
            return LogEntry(record.partition, record.offset)


def changes_of(entries: Iterable[LogEntry]) -> IndexChanges:
    """The rows ``entries`` add and the principals they forget, in log order."""
    changes = IndexChanges(rows=[], forgotten=[])
    for entry in entries:
        changes.rows.extend(entry.rows)
        if entry.forgets is not None:
            changes.forgotten.append(entry.forgets)
    return changes


def messages_of(records: Iterable[LogRecord]) -> IndexChanges:
    """The rows ``records`` add (every message of every turn and remembered memory) and the
    principals they forget, in log order (:func:`entry_of` of each)."""
    return changes_of(entry_of(record) for record in records)


def _rows(episode: TurnAppended | MemoryRemembered, record: LogRecord) -> list[MessageRow]:
    return [
        MessageRow(
            tenant=episode.tenant,
            principal=episode.principal,
            project=episode.project,
            session=episode.session,
            episode_id=episode.event_id,
            message_ordinal=message.ordinal,
            role=message.role.value,
            author=message.author,
            content=message.content,
            occurred_at=episode.occurred_at,
            source_partition=record.partition,
            source_offset=record.offset,
        )
        for message in episode_messages(episode)
    ]


_INSERT = (
    """
WITH incoming AS (
    SELECT m.* FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::int[],
                           $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::int[],
                           $12::bigint[])
           AS m(tenant, principal, project, session, episode_id, message_ordinal, role, author,
                content, occurred_at, source_partition, source_offset)
    WHERE NOT EXISTS (SELECT 1 FROM message_hidden h
                      WHERE h.tenant = m.tenant AND h.principal = m.principal
                        AND h.episode_id = m.episode_id AND h.message_ordinal = m.message_ordinal)
      AND NOT EXISTS (SELECT 1 FROM principal_tombstone t
                      WHERE t.principal_hash = encode(sha256(convert_to(
                          m.tenant || '/' || m.principal, 'UTF8')), 'hex'))
      AND NOT EXISTS (SELECT 1 FROM public.principal_forgotten f
                      WHERE f.principal_hash = encode(sha256(convert_to(
                          m.tenant || '/' || m.principal, 'UTF8')), 'hex'))
      AND NOT EXISTS (SELECT 1 FROM message x
                      WHERE x.tenant = m.tenant AND x.principal = m.principal
                        AND x.episode_id = m.episode_id AND x.message_ordinal = m.message_ordinal)
), chained AS (
    SELECT i.*, row_number() OVER w AS place, lag(i.episode_id) OVER w AS prev_episode,
           lag(i.message_ordinal) OVER w AS prev_ordinal, lag(i.content) OVER w AS prev_content
    FROM incoming i
    WINDOW w AS (PARTITION BY i.tenant, i.principal, i.project, i.session
                 ORDER BY i.source_partition, i.source_offset, i.message_ordinal)
)
INSERT INTO message (tenant, principal, project, session, episode_id, message_ordinal, role,
                     author, content, occurred_at, source_partition, source_offset,
                     context_episode_id, context_ordinal, context_vector)
SELECT c.tenant, c.principal, c.project, c.session, c.episode_id, c.message_ordinal, c.role,
       c.author, c.content, c.occurred_at, c.source_partition, c.source_offset,
       coalesce(c.prev_episode, b.episode_id), coalesce(c.prev_ordinal, b.message_ordinal),
       CASE WHEN c.place > 1 THEN to_tsvector('public.engram_english', c.prev_content)
            ELSE b.search_vector END
FROM chained c
LEFT JOIN LATERAL ("""
    + "{before}"
    + """) b ON c.place = 1
ON CONFLICT DO NOTHING
RETURNING tenant, principal, episode_id, message_ordinal, role, project, source_offset,
          search_vector || coalesce(context_vector, ''::tsvector) AS search_vector
"""
)
"""Insert what is neither hidden nor a forgotten principal's (the tombstone's hash is
:func:`resolution.beliefs.principal_hash`, computed here in SQL) nor there already (a record
read twice), each with its context (migration 0035): the message before it in its session —
the one before it in the same write, or else the latest the index holds. Returns what it
inserted, with the lexemes BM25 counts (its own and its context's), for :data:`_COUNTED`."""

_BEFORE = """
    SELECT x.episode_id, x.message_ordinal, x.search_vector FROM message x
    WHERE x.tenant = {m}.tenant AND x.principal = {m}.principal AND x.project = {m}.project
      AND x.session = {m}.session
      AND (x.source_partition, x.source_offset, x.message_ordinal)
          < ({m}.source_partition, {m}.source_offset, {m}.message_ordinal)
    ORDER BY x.source_partition DESC, x.source_offset DESC, x.message_ordinal DESC
    LIMIT 1
"""
"""The latest message the index holds before ``{m}`` in its session: its context."""

_INSERT = _INSERT.replace("{before}", _BEFORE.format(m="c"))

_COUNTED = """
WITH changed AS ({changed}), measured AS (
    SELECT c.*,
           (SELECT coalesce(sum(cardinality(v.positions)), 0) FROM unnest(c.search_vector) v)
               AS length
    FROM changed c
), postings AS ({postings}), scope AS (
    INSERT INTO message_scope_stats AS s (tenant, principal, role, project, messages, length)
    SELECT tenant, principal, role, project, {sign} count(*), {sign} sum(length)
    FROM measured GROUP BY tenant, principal, role, project
    ORDER BY tenant, principal, role, project
    ON CONFLICT (tenant, principal, role, project) DO UPDATE
    SET messages = s.messages + EXCLUDED.messages, length = s.length + EXCLUDED.length
)
INSERT INTO message_term_stats AS s (tenant, principal, lexeme, role, project, messages)
SELECT c.tenant, c.principal, v.lexeme, c.role, c.project, {sign} count(*)
FROM changed c, unnest(c.search_vector) v
GROUP BY c.tenant, c.principal, v.lexeme, c.role, c.project
ORDER BY c.tenant, c.principal, v.lexeme, c.role, c.project
ON CONFLICT (tenant, principal, lexeme, role, project) DO UPDATE
SET messages = s.messages + EXCLUDED.messages
"""
"""What BM25 reads (migration 0027: the postings and the counts) follows the rows ``{changed}``
inserts or deletes, in the same statement, so it can never disagree with the index: what the
statement did not write is not counted. ``{changed}`` returns the rows' key, role, project,
offset and vector. Counts are added in key order, so two writers lock rows alike."""

_POSTED = """
INSERT INTO message_term (tenant, principal, lexeme, episode_id, message_ordinal, role, project,
                          occurrences, length, source_offset)
SELECT c.tenant, c.principal, v.lexeme, c.episode_id, c.message_ordinal, c.role, c.project,
       greatest(cardinality(v.positions), 1), c.length, c.source_offset
FROM measured c, unnest(c.search_vector) v
ORDER BY c.tenant, c.principal, v.lexeme, c.episode_id, c.message_ordinal
ON CONFLICT DO NOTHING
"""
"""A message's postings: one per lexeme, with its occurrences (at least one: a vector stripped of
positions still holds the word) and the message's length; in key order, so a large write (a
recount) fills the key's index page after page rather than at random."""

_UNPOSTED = """
DELETE FROM message_term p USING measured c, unnest(c.search_vector) v
WHERE p.tenant = c.tenant AND p.principal = c.principal AND p.lexeme = v.lexeme
  AND p.episode_id = c.episode_id AND p.message_ordinal = c.message_ordinal
"""


def _counted(changed: str, *, deleting: bool) -> str:
    """:data:`_COUNTED` for ``changed``, an insert (counts up) or a delete (counts down)."""
    return _COUNTED.format(
        changed=changed,
        postings=_UNPOSTED if deleting else _POSTED,
        sign="-" if deleting else "",
    )


_EMPTIED = """
DELETE FROM {table} s USING unnest($1::text[], $2::text[]) AS p(tenant, principal)
WHERE s.tenant = p.tenant AND s.principal = p.principal AND s.messages = 0
"""
"""Statistics nothing counts any more: a lexeme of a hidden message's is a word, and no word of
a deleted belief's stays in PostgreSQL."""

STATS_TABLES = ("message_term", "message_term_stats", "message_scope_stats")
"""What migration 0027 keeps beside ``message``, emptied and refilled with it."""


async def recount_stats(conn: asyncpg.Connection) -> None:
    """Count the statistics again from ``message`` (migration 0027's backfill; a bench that
    writes ``message`` directly calls it, and tests compare it with what was maintained)."""
    await conn.execute(f"TRUNCATE {', '.join(STATS_TABLES)}")
    await conn.execute(_counted(_ALL_MESSAGES, deleting=False))


_ALL_MESSAGES = """
SELECT tenant, principal, episode_id, message_ordinal, role, project, source_offset,
       search_vector || coalesce(context_vector, ''::tsvector) AS search_vector
FROM message
"""


_COLUMNS = tuple(MessageRow.__dataclass_fields__)


async def lock_changes(conn: asyncpg.Connection, changes: IndexChanges) -> None:
    """Take the lock of every principal ``changes`` name (inside the transaction that writes
    them): shared by the writers of the log's messages (the index, the vectors), so a
    deletion the projector applies and a message they write never pass each other."""
    principals = {(r.tenant, r.principal) for r in changes.rows} | set(changes.forgotten)
    if principals:
        await lock_principals(conn, principals)


async def write_index(conn: asyncpg.Connection, entries: Sequence[LogEntry]) -> int:
    """Index ``entries`` (inside a transaction): their principals locked, then their messages
    and forgettings written. How many messages it read (written or left out)."""
    changes = changes_of(entries)
    await lock_changes(conn, changes)
    await _write(conn, changes)
    return len(changes.rows)


async def index_records(
    conn: asyncpg.Connection, topic: str, partition: int, records: Sequence[LogRecord]
) -> int:
    """Index ``records`` (one partition's plaintext records, in offset order) and store the
    offset past the last, in one transaction, as the index's sink does; records below the
    stored offset were indexed already and are skipped. How many messages it read. For
    writers outside a follower (a bench, the recall evaluation)."""
    if not records:
        return 0
    batch = Batch(topic, partition, [entry_of(r) for r in records], records[-1].offset + 1)

    async def write(unread: Batch[LogEntry]) -> int:
        return await write_index(conn, unread.records)

    return await write_tracked(conn, INDEX_TRACKING, batch, write)


async def _write(conn: asyncpg.Connection, changes: IndexChanges) -> None:
    """Rows and forgettings in log order: a message before a forgetting goes with it, and one
    after it is kept out by the tombstone once the projector has written it."""
    if changes.rows:
        columns = [[getattr(row, name) for row in changes.rows] for name in _COLUMNS]
        await conn.execute(_counted(_INSERT, deleting=False), *columns)
    for tenant, principal in changes.forgotten:
        removed = {}
        for table in ("message", *STATS_TABLES):
            status = await conn.execute(
                f"DELETE FROM {table} WHERE tenant = $1 AND principal = $2", tenant, principal
            )
            removed[table] = deleted_rows(status)
        await note_erased(conn, tenant, principal, removed)  # for the forgetting's receipt


async def hide_messages(
    conn: asyncpg.Connection, keys: Sequence[MessageKey], *, quotes: Sequence[str] = ()
) -> None:
    """Take ``keys`` out of the index for good (``message_hidden``: ids, no words), with every
    indexed message of the same principals that holds one of ``quotes``; their vectors go from
    every embedding generation in the same transaction."""
    if not keys:
        return
    principals = sorted({(k.tenant, k.principal) for k in keys})
    quoting = await conn.fetch(
        "SELECT m.tenant, m.principal, m.episode_id, m.message_ordinal FROM message m "
        "JOIN unnest($1::text[], $2::text[]) AS p(tenant, principal) "
        "ON m.tenant = p.tenant AND m.principal = p.principal "
        "WHERE EXISTS (SELECT 1 FROM unnest($3::text[]) q WHERE q <> '' "
        "AND strpos(m.content, q) > 0)",
        [t for t, _ in principals],
        [p for _, p in principals],
        list(quotes),
    )
    hidden = sorted({*keys, *(MessageKey(*row) for row in quoting)})
    columns = [list(column) for column in zip(*hidden, strict=True)]
    await conn.execute(
        "INSERT INTO message_hidden (tenant, principal, episode_id, message_ordinal) "
        "SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::int[]) "
        "ON CONFLICT DO NOTHING",
        *columns,
    )
    await delete_message_vectors(conn, hidden)
    await conn.execute(_counted(_HIDE, deleting=True), *columns)
    await conn.execute(_counted(_CONTEXT_OF_HIDDEN, deleting=True), *columns)
    await conn.execute(_counted(_RECONTEXT, deleting=False), *columns)
    for table in STATS_TABLES[1:]:
        await conn.execute(
            _EMPTIED.format(table=table),
            [t for t, _ in principals],
            [p for _, p in principals],
        )


_HIDE = """
DELETE FROM message m USING unnest($1::text[], $2::text[], $3::uuid[], $4::int[])
    AS h(tenant, principal, episode_id, message_ordinal)
WHERE m.tenant = h.tenant AND m.principal = h.principal
  AND m.episode_id = h.episode_id AND m.message_ordinal = h.message_ordinal
RETURNING m.tenant, m.principal, m.episode_id, m.message_ordinal, m.role, m.project,
          m.source_offset, m.search_vector || coalesce(m.context_vector, ''::tsvector) AS search_vector
"""


_CONTEXT_OF_HIDDEN = """
SELECT m.tenant, m.principal, m.episode_id, m.message_ordinal, m.role, m.project,
       m.source_offset, m.search_vector || coalesce(m.context_vector, ''::tsvector) AS search_vector
FROM message m JOIN unnest($1::text[], $2::text[], $3::uuid[], $4::int[])
    AS h(tenant, principal, episode_id, message_ordinal)
  ON m.tenant = h.tenant AND m.principal = h.principal
 AND m.context_episode_id = h.episode_id AND m.context_ordinal = h.message_ordinal
"""
"""The messages whose context is a hidden one, as counted now (to be counted down)."""

_RECONTEXT = (
    """
UPDATE message m
SET (context_episode_id, context_ordinal, context_vector) = ("""
    + _BEFORE.format(m="m")
    + """)
FROM unnest($1::text[], $2::text[], $3::uuid[], $4::int[])
    AS h(tenant, principal, episode_id, message_ordinal)
WHERE m.tenant = h.tenant AND m.principal = h.principal
  AND m.context_episode_id = h.episode_id AND m.context_ordinal = h.message_ordinal
RETURNING m.tenant, m.principal, m.episode_id, m.message_ordinal, m.role, m.project,
          m.source_offset, m.search_vector || coalesce(m.context_vector, ''::tsvector) AS search_vector
"""
)
"""Those messages' context chosen again among what the index still holds (the hidden rows are
gone by then), as an index built after the hiding would have chosen it; counted up again."""


def message_item_id(episode_id: uuid.UUID, ordinal: int) -> str:
    """A message's id in ``embedding_vector``: ``event_id:ordinal`` (as PostgreSQL prints it)."""
    return f"{episode_id}:{ordinal}"


async def delete_message_vectors(conn: asyncpg.Connection, keys: Sequence[MessageKey]) -> None:
    """Remove these messages' vectors from every embedding generation: vectors are derived
    from the words, so whatever takes a message out of the index takes its vectors too."""
    by_principal: dict[tuple[str, str], list[str]] = {}
    for key in keys:
        by_principal.setdefault((key.tenant, key.principal), []).append(
            message_item_id(key.episode_id, key.message_ordinal)
        )
    for (tenant, principal), item_ids in sorted(by_principal.items()):
        await embedding_store.delete_items(conn, tenant, principal, "message", item_ids)


def redacted_messages(
    batches: Iterable[ClaimsBatchFormed], tombstones: Iterable[tuple[str, str, str]]
) -> tuple[list[MessageKey], list[str]]:
    """The messages whose words redaction takes out of ``batches`` (the chunk's, raw, with the
    kept ones it resolves again), and the quotes it takes: what a deletion resolved from its
    principal's kept batches must take out of the index too, where the deleted belief's
    evidence rows are already gone. ``tombstones``: (tenant, principal, content hash) known."""
    known: dict[tuple[str, str], set[str]] = {}
    for tenant, principal, digest in tombstones:
        known.setdefault((tenant, principal), set()).add(digest)
    mine: dict[tuple[str, str], list[ClaimsBatchFormed]] = {}
    for batch in batches:
        mine.setdefault(principal_of(batch), []).append(batch)
    keys: set[MessageKey] = set()
    quotes: set[str] = set()
    for who, raw in mine.items():
        deleted = known.get(who, set()) | deleted_hashes(raw)
        for before, after in zip(raw, redact(raw, deleted), strict=True):
            if before is after:
                continue
            kept = {c.candidate_id for c in after.candidates}
            ordinals = {c.message_ordinal for c in before.candidates if c.candidate_id not in kept}
            quotes |= {c.quote for c in before.candidates if c.candidate_id not in kept and c.quote}
            for old, new in zip(before.refusals, after.refusals, strict=False):
                if old != new:
                    ordinals.add(old.message_ordinal)
                    quotes |= {old.quote} if old.quote else set()
            keys |= {MessageKey(*who, before.episode_id, o) for o in ordinals}
    return sorted(keys), sorted(quotes)
