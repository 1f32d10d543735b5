"""What one batch did, as resolution reports it: the ids behind its memory events and the
undo record the store keeps beside it (:mod:`engram.resolution.undo`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from engram.resolution.undo import BatchUndo


@dataclass
class BatchOutcome:
    """What one batch did: its audit counts and the memory events published after commit."""

    skipped: bool = False
    created: list[uuid.UUID] = field(default_factory=list)
    reinforced: list[uuid.UUID] = field(default_factory=list)
    superseded: list[uuid.UUID] = field(default_factory=list)
    conflicted: list[uuid.UUID] = field(default_factory=list)
    promoted: list[uuid.UUID] = field(default_factory=list)
    corrected: list[uuid.UUID] = field(default_factory=list)
    deleted: list[uuid.UUID] = field(default_factory=list)
    undo: BatchUndo = field(default_factory=BatchUndo)
    """What undoing the batch takes (:mod:`engram.resolution.undo`), kept with it for a rewind."""
