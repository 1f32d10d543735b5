-- What an in-process index of vectors needs to stay in step with `embedding_vector` (issue 37,
-- item 6: projections/messages/embeddings/resident.py). A process that serves recall keeps each
-- large principal's vectors in memory (an approximate-nearest-neighbour index beyond a size)
-- instead of reading them all on every question; before each search it asks the table, in the
-- search's own snapshot, whether anything changed since it loaded them:
--
-- - `seq`: a number from one sequence, given to every vector when it is written or rewritten.
--   Vectors of a principal's messages are written under the principal's lock (the embedding
--   follower, projections/messages/vectors.py), so per principal a later commit has a larger
--   number: a process that has read up to N reads what is new as `seq > N`.
-- - `embedding_vector_epoch`: per (generation, tenant, principal, kind), how many statements
--   have deleted vectors of it. A process whose count differs loads the principal again, so a
--   hidden message's vector or a forgotten principal's leaves its memory on the next search.
--   When nothing of that principal is left (forgetting) the row goes too, so no name of a
--   forgotten principal stays here; `embedding_vector_emptied` counts such statements instead
--   (one number, no names), and a process whose count differs loads again whatever it holds.
--
-- The table and its sequence are shared by every projection generation, like the vectors.

CREATE SEQUENCE IF NOT EXISTS embedding_vector_seq;
ALTER TABLE embedding_vector
    ADD COLUMN IF NOT EXISTS seq bigint NOT NULL DEFAULT nextval('embedding_vector_seq');
CREATE INDEX IF NOT EXISTS embedding_vector_by_seq
    ON embedding_vector (generation, tenant, principal, kind, seq);

CREATE OR REPLACE FUNCTION embedding_vector_renumbered() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.seq := nextval('embedding_vector_seq');
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS embedding_vector_renumbered ON embedding_vector;
CREATE TRIGGER embedding_vector_renumbered BEFORE UPDATE ON embedding_vector
    FOR EACH ROW EXECUTE FUNCTION embedding_vector_renumbered();

CREATE TABLE IF NOT EXISTS embedding_vector_epoch (
    generation text   NOT NULL,
    tenant     text   NOT NULL,
    principal  text   NOT NULL,
    kind       text   NOT NULL,
    epoch      bigint NOT NULL,
    PRIMARY KEY (generation, tenant, principal, kind)
);

CREATE TABLE IF NOT EXISTS embedding_vector_emptied (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    count bigint  NOT NULL
);
INSERT INTO embedding_vector_emptied (one, count) VALUES (true, 0) ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION embedding_vector_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    emptied bigint;
BEGIN
    INSERT INTO embedding_vector_epoch AS e (generation, tenant, principal, kind, epoch)
    SELECT DISTINCT generation, tenant, principal, kind, 1 FROM gone
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (generation, tenant, principal, kind) DO UPDATE SET epoch = e.epoch + 1;
    DELETE FROM embedding_vector_epoch e
    USING (SELECT DISTINCT generation, tenant, principal, kind FROM gone) g
    WHERE e.generation = g.generation AND e.tenant = g.tenant AND e.principal = g.principal
      AND e.kind = g.kind
      AND NOT EXISTS (SELECT 1 FROM embedding_vector v
                      WHERE v.generation = g.generation AND v.tenant = g.tenant
                        AND v.principal = g.principal AND v.kind = g.kind);
    GET DIAGNOSTICS emptied = ROW_COUNT;
    IF emptied > 0 THEN
        UPDATE embedding_vector_emptied SET count = count + 1;
    END IF;
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS embedding_vector_deleted ON embedding_vector;
CREATE TRIGGER embedding_vector_deleted AFTER DELETE ON embedding_vector
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
    EXECUTE FUNCTION embedding_vector_deleted();
