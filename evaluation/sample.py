"""``engram eval sample``: labeling sheets drawn from what forms on real turns.

Precision and recall on text nobody wrote for the extractor can only be measured by a person
reading what formed. This module forms every turn of a JSONL file with the deterministic
policy (no services) and draws, for a seed, either N formed beliefs with their quotes (the
precision sheet: correct / true-but-trivial / wrong) or N of the principal's messages with
what formed from each (the recall sheet: which durable facts were caught). The same input and
seed always draw the same sheet, so a sheet labeled before a change can be re-drawn after it.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from engram.formation.deterministic import trace
from engram.formation.policy import FormationPolicy
from engram.ingest.jsonl import read_episodes
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.common import Role
from engram.schemas.episodes import MemoryRemembered, TurnAppended, episode_messages
from engram.streams.formation_stage import FormationStage

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FormedBelief:
    """One formed candidate, as a labeler reads it."""

    episode_id: str
    ordinal: int
    statement: str
    relation: str
    confidence: float
    quote: str

    def to_dict(self) -> dict[str, object]:
        return {
            "episode_id": self.episode_id,
            "ordinal": self.ordinal,
            "statement": self.statement,
            "relation": self.relation,
            "confidence": self.confidence,
            "quote": self.quote,
            "label": "",
        }


@dataclass(frozen=True, slots=True)
class FormedMessage:
    """One principal message and every belief that formed from it."""

    episode_id: str
    ordinal: int
    content: str
    formed: tuple[str, ...]
    abstained: tuple[str, ...] = ()
    """What the deterministic arm found and dropped, with why: helps a labeler see near misses."""

    def to_dict(self) -> dict[str, object]:
        return {
            "episode_id": self.episode_id,
            "ordinal": self.ordinal,
            "content": self.content,
            "formed": list(self.formed),
            "abstained": list(self.abstained),
            "durable_facts": None,
            "caught": None,
        }


@dataclass(frozen=True, slots=True)
class Formation:
    beliefs: list[FormedBelief]
    messages: list[FormedMessage]


def form_file(path: Path, policy: FormationPolicy | None = None) -> Formation:
    """Form every episode of ``path`` in file order; collect beliefs and user messages."""
    stage = FormationStage(policy or FormationPolicy())
    beliefs: list[FormedBelief] = []
    messages: list[FormedMessage] = []
    for offset, episode in enumerate(read_episodes(path)):
        source = SourcePosition(topic="sample", partition=0, offset=offset)
        batch = asyncio.run(stage.form(episode, source))
        beliefs.extend(_beliefs(batch))
        messages.extend(_user_messages(episode, batch))
    return Formation(beliefs=beliefs, messages=messages)


def _beliefs(batch: ClaimsBatchFormed) -> Iterable[FormedBelief]:
    for c in batch.candidates:
        yield FormedBelief(
            str(batch.episode_id), c.message_ordinal, c.statement, c.relation, c.confidence, c.quote
        )


def _user_messages(
    episode: TurnAppended | MemoryRemembered, batch: ClaimsBatchFormed
) -> Iterable[FormedMessage]:
    for message in episode_messages(episode):
        if message.role is not Role.USER:
            continue
        formed = tuple(
            c.statement for c in batch.candidates if c.message_ordinal == message.ordinal
        )
        found = trace(message.content, occurred_on=episode.occurred_at.date())
        abstained = tuple(f"{a.claim} ({a.reason})" for a in found.abstentions)
        yield FormedMessage(
            str(episode.event_id), message.ordinal, message.content, formed, abstained
        )


def draw(items: list[T], n: int, seed: int) -> list[T]:
    """``n`` items (or all of them) drawn for ``seed``, kept in their original order."""
    return [items[i] for i in _drawn(len(items), n, seed)]


def draw_excluding(
    items: list[T],
    n: int,
    seed: int,
    earlier: Iterable[tuple[int, int]] = (),
    drawn_before: Callable[[T], bool] | None = None,
) -> list[T]:
    """``n`` items drawn for ``seed`` from those that no earlier sheet took.

    Each earlier draw is ``(seed, count)`` and is recomputed exactly as :func:`draw` made it on
    the same items — which holds only for a sheet drawn with no exclusions of its own; a sheet
    drawn with exclusions is named by its items instead (``drawn_before``, e.g. its episode and
    ordinal read back from the sheet's JSON). Without either this is :func:`draw`.
    """
    taken: set[int] = set()
    for earlier_seed, count in earlier:
        taken.update(_drawn(len(items), count, earlier_seed))
    left = [
        item
        for i, item in enumerate(items)
        if i not in taken and not (drawn_before and drawn_before(item))
    ]
    return draw(left, n, seed)


def sheet_keys(text: str) -> frozenset[tuple[str, int]]:
    """The (episode id, ordinal) of every row of a sheet printed by ``--json``.

    Raises ``ValueError`` when the text is not such a sheet.
    """
    try:
        rows = json.loads(text)
        return frozenset((str(row["episode_id"]), int(row["ordinal"])) for row in rows)
    except (json.JSONDecodeError, TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"not a sheet printed by --json ({exc})") from exc


def parse_earlier(text: str, default_count: int) -> list[tuple[int, int]]:
    """ "12,99:150" → [(12, default_count), (99, 150)]: earlier draws as seed[:count].

    Raises ``ValueError`` naming the entry that is not a seed or a positive count.
    """
    earlier: list[tuple[int, int]] = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        seed_text, _, count_text = entry.partition(":")
        try:
            seed = int(seed_text)
            count = int(count_text) if count_text else default_count
        except ValueError as exc:
            raise ValueError(f"{entry!r} is not SEED or SEED:COUNT") from exc
        if count < 0:
            raise ValueError(f"{entry!r}: the count must not be negative")
        earlier.append((seed, count))
    return earlier


def _drawn(population: int, n: int, seed: int) -> list[int]:
    """The indices a draw of ``n`` for ``seed`` takes from ``population`` items, in order."""
    if n >= population:
        return list(range(population))
    return sorted(random.Random(seed).sample(range(population), n))
