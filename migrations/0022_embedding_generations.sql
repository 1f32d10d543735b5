-- Semantic embeddings in generations (issue 28, item 3). An embedding generation is named by
-- model, vector size and text recipe (embeddings/generation.py); it is `building` while vectors
-- are written by replay or backfill, `built` when complete, `active` when searches without a
-- named generation read it (at most one at a time: the partial unique index), and goes back to
-- `built` when another is activated. Activation is one transaction (embeddings/store.py), and a
-- search resolves its generation and reads its vectors in one statement, so it never mixes two.
--
-- Vectors are float32, little-endian, unit length, in `bytea` (4 bytes × dimensions; the store
-- checks the size). The server has no pgvector here (pg_available_extensions has no `vector`),
-- so similarity is exact cosine over the one principal's vectors, computed by the reader
-- (numpy); the primary key's prefix (generation, tenant, principal, kind) is what a search
-- reads. These tables are shared, not per policy generation: an item's id says what it is (a
-- message's `event_id:ordinal`, a belief's id), and deleting a belief or forgetting a principal
-- deletes its vectors in every embedding generation.

CREATE TABLE embedding_generation (
    name          text PRIMARY KEY,
    model         text NOT NULL,
    dimensions    integer NOT NULL CHECK (dimensions > 0),
    recipe        text NOT NULL,
    status        text NOT NULL DEFAULT 'building'
                  CHECK (status IN ('building', 'built', 'active')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    built_at      timestamptz,
    activated_at  timestamptz,
    UNIQUE (model, dimensions, recipe)
);

CREATE UNIQUE INDEX embedding_generation_one_active
    ON embedding_generation ((true)) WHERE status = 'active';

CREATE TABLE embedding_vector (
    generation  text NOT NULL REFERENCES embedding_generation (name) ON DELETE CASCADE,
    tenant      text NOT NULL,
    principal   text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('belief', 'message')),
    item_id     text NOT NULL,
    vector      bytea NOT NULL,
    PRIMARY KEY (generation, tenant, principal, kind, item_id)
);

-- Forgetting a principal and deleting a belief reach every generation: by scope, not by name.
CREATE INDEX embedding_vector_by_scope ON embedding_vector (tenant, principal, kind, item_id);
