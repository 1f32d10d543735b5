"""What applying one claims batch did: the source of its audit counts and memory events."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass
class BatchOutcome:
    """What one batch did; also the source of the memory events published after commit."""

    skipped: bool = False
    created: list[uuid.UUID] = field(default_factory=list)
    reinforced: list[uuid.UUID] = field(default_factory=list)
    superseded: list[uuid.UUID] = field(default_factory=list)
    conflicted: list[uuid.UUID] = field(default_factory=list)
    promoted: list[uuid.UUID] = field(default_factory=list)
