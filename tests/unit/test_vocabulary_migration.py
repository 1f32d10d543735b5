"""The vocabulary in the database is exactly the vocabulary in code."""

from __future__ import annotations

import re
from pathlib import Path

from formation.vocabulary import RELATIONS

MIGRATION = Path(__file__).resolve().parents[2] / "migrations" / "0002_vocabulary.sql"
ROW = re.compile(
    r"\((\d+), '([a-z_]+)', '([a-z]+)', '(entity|value)', '(single|many)', (true|false), "
    r"'([a-z_]+)', '([a-z]+)', '((?:[^']|'')*)'\)"
)


def test_the_vocabulary_migration_seeds_the_same_relations_in_the_same_order() -> None:
    rows = ROW.findall(MIGRATION.read_text(encoding="utf-8"))
    in_sql = [
        (
            int(pos),
            name,
            semantic,
            kind,
            card,
            event == "true",
            belief,
            ceiling,
            desc.replace("''", "'"),
        )
        for pos, name, semantic, kind, card, event, belief, ceiling, desc in rows
    ]
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
    assert in_sql == in_code
