"""Reading episodes from a JSON-lines file, with errors that name the line and the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from engram.infra.errors import EngramFailure
from engram.ingest.producer import EpisodeTooLarge, EpisodeUnencodable, encoded
from engram.schemas.episodes import MemoryRemembered, TurnAppended, decode_episode


class InvalidEpisodeLine(EngramFailure, ValueError):
    code = "invalid_episode_line"

    def __init__(self, path: Path, line_number: int, problem: str):
        super().__init__(f"{path}:{line_number}: {problem}")
        self.path = path
        self.line_number = line_number


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "value"
    return f"{where}: {first['msg']} ({error.error_count()} problem(s) in all)"


def read_episodes(
    path: Path, *, max_bytes: int | None = None
) -> Iterator[TurnAppended | MemoryRemembered]:
    """Every episode in the file, in order. Blank lines are skipped; a bad line stops the read
    before anything is published, so a file is imported whole or not at all.

    A line is bad when it breaks the contract (the text contract included: a NUL or a lone
    surrogate names its field) or, with ``max_bytes``, when its episode is larger on the log
    than the worker takes — the same measure the writer and ``POST /v1/turns`` apply, so the
    line is named here instead of the whole file failing at the writer."""
    with path.open("rb") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                episode = decode_episode(line)
                if max_bytes is not None:
                    encoded([episode], max_bytes)
            except ValidationError as error:
                raise InvalidEpisodeLine(path, line_number, _describe(error)) from None
            except EpisodeTooLarge as error:
                problem = (
                    f"the episode is {error.size} bytes, over the limit of {error.limit} "
                    "(ENGRAM_KAFKA_MAX_EVENT_BYTES)"
                )
                raise InvalidEpisodeLine(path, line_number, problem) from None
            except EpisodeUnencodable as error:
                raise InvalidEpisodeLine(path, line_number, error.problem) from None
            yield episode


def load_episodes(
    path: Path, *, max_bytes: int | None = None
) -> list[TurnAppended | MemoryRemembered]:
    return list(read_episodes(path, max_bytes=max_bytes))
