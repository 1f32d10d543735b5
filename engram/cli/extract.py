"""``engram extract``: turns on stdin, candidates and refusals on stdout, no services needed."""

from __future__ import annotations

import asyncio
from typing import IO

import orjson

from engram.policies.in_force import default_policy
from engram.schemas.claims import SourcePosition
from engram.schemas.sealed import SealedEvent
from engram.streams.dead_letters import DeadLetter, admit_record
from engram.streams.formation_stage import FormationStage


def extract_lines(lines: IO[bytes], out: IO[str], errors: IO[str]) -> int:
    """Form every line with the deterministic policy; a bad line is reported and skipped.

    Returns the exit code: 0 when every line was an episode, 1 when any was not.
    """
    stage = FormationStage(default_policy())
    status = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        admitted = admit_record(line.rstrip(b"\n"), max_bytes=1 << 24)
        if isinstance(admitted, DeadLetter):
            errors.write(f"line {number}: {admitted.reason.value}: {admitted.detail}\n")
            status = 1
            continue
        if isinstance(admitted, SealedEvent):
            errors.write(f"line {number}: sealed: engram extract reads unencrypted events only\n")
            status = 1
            continue
        source = SourcePosition(topic="stdin", partition=0, offset=number - 1)
        batch = asyncio.run(stage.form(admitted, source))
        for candidate in batch.candidates:
            record = {
                "kind": "candidate",
                "episode_id": str(batch.episode_id),
                **candidate.model_dump(mode="json"),
            }
            out.write(orjson.dumps(record).decode() + "\n")
        for refusal in batch.refusals:
            record = {
                "kind": "refusal",
                "episode_id": str(batch.episode_id),
                "policy_version": batch.policy_version,
                **refusal.model_dump(mode="json"),
            }
            out.write(orjson.dumps(record).decode() + "\n")
    return status
