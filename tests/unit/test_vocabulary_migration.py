"""The vocabulary the migrations leave in the database is exactly the vocabulary in code.

Every migration is read, in order, not only the one that seeded the table: a later migration
that adds relations is replayed here, and one that changes the table's rows in a way this test
cannot replay (an UPDATE, a DELETE, ...) fails it until the test learns to.
``tests/integration/test_vocabulary_in_database.py`` checks the same against a database built
by the migrations themselves."""

from __future__ import annotations

import re
from importlib.resources.abc import Traversable
from pathlib import Path

import pytest

from engram.formation.vocabulary import RELATIONS
from engram.projections.migrate import MIGRATIONS_DIR, discover
from tests.support.migrations import copy_migrations

ROW = re.compile(
    r"\((\d+), '([a-z_]+)', '([a-z]+)', '(entity|value)', '(single|many)', (true|false), "
    r"'([a-z_]+)', '([a-z]+)', '((?:[^']|'')*)'\)"
)
WRITE = re.compile(
    r"\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|ALTER\s+TABLE(?:\s+IF\s+EXISTS)?"
    r"|DROP\s+TABLE(?:\s+IF\s+EXISTS)?|COPY)\s+(?:ONLY\s+)?(?:public\.)?relation\b",
    re.IGNORECASE,
)
"""A statement that writes the ``relation`` table (or reshapes it)."""
STATEMENT_END = re.compile(r";\s*$", re.MULTILINE)

Row = tuple[int, str, str, str, str, bool, str, str, str]


def _replayed(directory: Traversable = MIGRATIONS_DIR) -> list[Row]:
    """The vocabulary's rows after every migration's INSERTs into ``relation``, in order."""
    rows: list[Row] = []
    for migration in discover(directory):
        for write in WRITE.finditer(migration.sql):
            verb = " ".join(write[1].upper().split()[:2])
            assert verb == "INSERT INTO", (
                f"{migration.version:04d}_{migration.name}.sql changes the vocabulary table with "
                f"{write[1]!r}; replay it in this test"
            )
            end = STATEMENT_END.search(migration.sql, write.end())
            statement = migration.sql[write.end() : end.start() if end else None]
            for pos, name, semantic, kind, card, event, belief, ceiling, desc in ROW.findall(
                statement
            ):
                row = (int(pos), name, semantic, kind, card, event == "true", belief, ceiling)
                rows.append((*row, desc.replace("''", "'")))
    return rows


def test_the_migrations_seed_the_same_relations_in_the_same_order() -> None:
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
    assert _replayed() == in_code


def test_a_later_migration_adding_a_relation_is_replayed_after_the_seed(tmp_path: Path) -> None:
    folder = copy_migrations(tmp_path / "migrations")
    (folder / "9000_more_vocabulary.sql").write_text(
        "INSERT INTO relation (position, name, semantic_type, object_kind, cardinality, "
        "is_event, belief_type, portability_ceiling, description) VALUES\n"
        "    (40, 'plays', 'preference', 'value', 'many', false, 'preference', 'portable', "
        "'a game or instrument the subject plays');\n",
        encoding="utf-8",
    )
    replayed = _replayed(folder)
    assert len(replayed) == len(RELATIONS) + 1
    assert replayed[-1][:2] == (40, "plays")


def test_a_migration_changing_the_vocabulary_otherwise_fails_the_replay(tmp_path: Path) -> None:
    folder = copy_migrations(tmp_path / "migrations")
    (folder / "9000_rename.sql").write_text(
        "UPDATE relation SET description = 'x' WHERE name = 'speaks';\n", encoding="utf-8"
    )
    with pytest.raises(AssertionError, match=r"9000_rename\.sql changes the vocabulary"):
        _replayed(folder)
