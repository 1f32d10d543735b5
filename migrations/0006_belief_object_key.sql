-- The object's identity within the principal (kind plus normalised name), as resolution
-- compares it. Stored so the projector can leave a conflict key's superseded history with
-- other objects in the database: resolution only ever meets past values of the same claim,
-- and that history grows with every change of value. Rows written before this column existed
-- keep NULL and are always loaded, which is what happened before.
ALTER TABLE belief ADD COLUMN object_key text;
