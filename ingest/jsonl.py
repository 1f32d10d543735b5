"""Reading episodes from a JSON-lines file, with errors that name the line and the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from schemas.episodes import MemoryRemembered, TurnAppended, decode_episode


class InvalidEpisodeLine(ValueError):
    def __init__(self, path: Path, line_number: int, problem: str):
        super().__init__(f"{path}:{line_number}: {problem}")
        self.path = path
        self.line_number = line_number


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "value"
    return f"{where}: {first['msg']} ({error.error_count()} problem(s) in all)"


def read_episodes(path: Path) -> Iterator[TurnAppended | MemoryRemembered]:
    """Every episode in the file, in order. Blank lines are skipped; a bad line stops the read
    before anything is published, so a file is imported whole or not at all."""
    with path.open("rb") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield decode_episode(line)
            except ValidationError as error:
                raise InvalidEpisodeLine(path, line_number, _describe(error)) from None


def load_episodes(path: Path) -> list[TurnAppended | MemoryRemembered]:
    return list(read_episodes(path))
