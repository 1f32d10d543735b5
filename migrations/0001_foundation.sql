-- Foundation: extensions and the projector's consumed offsets.
-- Offsets live in the same database as the rows they produced, and are written in the same
-- transaction, which is what makes projection exactly-once.
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE projector_offset (
    projector   text    NOT NULL,
    topic       text    NOT NULL,
    partition   integer NOT NULL CHECK (partition >= 0),
    next_offset bigint  NOT NULL CHECK (next_offset >= 0),
    PRIMARY KEY (projector, topic, partition)
);
