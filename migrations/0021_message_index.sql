-- engram: each generation
-- The index of the principal's own words (issue 28, item 2): every message of every turn on the
-- log, with its role, author, session, event time and log position, searchable in the
-- `engram_english` configuration of migration 0020. A projection of the log like the others:
-- written only by the message indexer (projections/message_indexer.py), whose offsets live in
-- `projector_offset` under the projector name 'messages', rebuilt by replay, one per generation.
--
-- `message_hidden` names, by ids and never by words, the messages the index must not hold: those
-- a deleted belief quoted (its evidence, the refusals that quoted the same words, and later
-- statements of the same content, refused as tombstoned). The projector writes it when it
-- deletes; the indexer reads it before it writes, both under the principal's lock, so whichever
-- comes second leaves the message out.

CREATE TABLE IF NOT EXISTS message (
    tenant           text        NOT NULL,
    principal        text        NOT NULL,
    project          text        NOT NULL,
    session          text        NOT NULL,
    episode_id       uuid        NOT NULL,
    message_ordinal  integer     NOT NULL,
    role             text        NOT NULL,
    author           text,
    content          text        NOT NULL,
    occurred_at      timestamptz NOT NULL,
    source_partition integer     NOT NULL,
    source_offset    bigint      NOT NULL,
    search_vector    tsvector    GENERATED ALWAYS AS (
        to_tsvector('public.engram_english', content)
    ) STORED,
    PRIMARY KEY (tenant, principal, episode_id, message_ordinal)
);
CREATE INDEX IF NOT EXISTS message_search ON message USING gin (search_vector);
CREATE INDEX IF NOT EXISTS message_principal_time ON message (tenant, principal, occurred_at);

CREATE TABLE IF NOT EXISTS message_hidden (
    tenant          text    NOT NULL,
    principal       text    NOT NULL,
    episode_id      uuid    NOT NULL,
    message_ordinal integer NOT NULL,
    PRIMARY KEY (tenant, principal, episode_id, message_ordinal)
);
