"""The packaged migrations as plain files, for tests that edit them or stop part-way.

``MIGRATIONS_DIR`` is package data (a ``Traversable``, not necessarily a folder on disk), so a
test copies the files it needs by what ``discover`` read rather than by path.
"""

from __future__ import annotations

from pathlib import Path

from projections.migrate import discover


def copy_migrations(target: Path, *, below: int | None = None) -> Path:
    """Write every packaged migration (only those numbered below ``below``, when given) into
    ``target`` under its own file name; return ``target`` for ``migrate(conn, target)``."""
    target.mkdir(parents=True, exist_ok=True)
    for migration in discover():
        if below is None or migration.version < below:
            name = f"{migration.version:04d}_{migration.name}.sql"
            (target / name).write_text(migration.sql, encoding="utf-8")
    return target
