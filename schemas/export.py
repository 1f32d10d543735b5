"""JSON Schema exports of the episode events, for producers that are not written in Python, and of
what Engram sends: memory events and webhook notifications, for consumers that are not."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, PrincipalForgotten
from engram.schemas.episodes import MemoryRemembered, TurnAppended, episode_adapter
from engram.schemas.log import log_event_adapter
from engram.schemas.memory_events import memory_event_adapter
from engram.schemas.sealed import SealedClaimsBatch, SealedEvent, claims_record_adapter
from engram.schemas.webhooks import notification_adapter

JSON_DIR = Path(__file__).resolve().parent / "json"

EXPORTS: dict[str, type[BaseModel]] = {
    "turn.appended.v1.json": TurnAppended,
    "memory.remember.v1.json": MemoryRemembered,
    "claims.formed.v1.json": ClaimsBatchFormed,
    "belief.corrected.v1.json": BeliefCorrected,
    "belief.deleted.v1.json": BeliefDeleted,
    "principal.forgotten.v1.json": PrincipalForgotten,
    "sealed.v1.json": SealedEvent,
    "claims.sealed.v1.json": SealedClaimsBatch,
}


def rendered_schemas() -> dict[str, str]:
    files = {name: model.model_json_schema() for name, model in EXPORTS.items()}
    files["episode.v1.json"] = episode_adapter.json_schema()
    files["log.v1.json"] = log_event_adapter.json_schema()
    files["claims.v1.json"] = claims_record_adapter.json_schema()
    # what other consumers read from engram.memory-events, and what a webhook endpoint receives
    files["memory-event.v1.json"] = memory_event_adapter.json_schema()
    files["webhook.v1.json"] = notification_adapter.json_schema()
    return {
        name: json.dumps(schema, indent=2, sort_keys=True) + "\n" for name, schema in files.items()
    }


def export_json_schemas(*, check: bool = False, directory: Path = JSON_DIR) -> list[str]:
    """Write (or with ``check``, compare) every schema file; return the names that differed."""
    stale = []
    for name, text in rendered_schemas().items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
            if not check:
                directory.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    return stale
