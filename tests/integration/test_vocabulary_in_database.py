"""The vocabulary a database built by every migration holds is exactly the vocabulary in code:
the replay in tests/unit/test_vocabulary_migration.py, done by PostgreSQL."""

from __future__ import annotations

import asyncpg
import pytest

from engram.formation.vocabulary import RELATIONS

pytestmark = pytest.mark.integration


async def test_the_migrated_database_holds_the_vocabulary_of_the_code(fresh_database: str) -> None:
    conn = await asyncpg.connect(fresh_database)
    try:
        rows = await conn.fetch(
            "SELECT position, name, semantic_type, object_kind, cardinality, is_event, "
            "belief_type, portability_ceiling, description FROM relation ORDER BY position"
        )
    finally:
        await conn.close()
    in_code = [
        (
            i,
            r.name,
            r.semantic_type,
            r.object_kind,
            r.cardinality,
            r.is_event,
            r.belief_type.value,
            r.portability_ceiling.value,
            r.description,
        )
        for i, r in enumerate(RELATIONS, start=1)
    ]
    assert [tuple(row) for row in rows] == in_code
