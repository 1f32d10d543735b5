"""Recorded model answers: a model's replies to the extraction prompt, kept to be replayed.

A file of answers holds, one JSON object a line, ``{"key": ..., "claims": [...]}``: the
``claims`` list of the model's reply to one message, unchanged, keyed by the SHA-256 of the
message's role, a NUL byte and the message text exactly as the arm sends it (redacted)
(:func:`answer_key`). It may open with a header line ``{"prompt_sha256": ...}`` naming the
prompt the answers were given to; otherwise the caller names it. Answers given to another
prompt than the one in force are *stale*: they answer questions the arm no longer asks, so the
harness names them and refuses them unless told to accept them, and its report then says so.

The same file is served over HTTP by :mod:`.replay` (the worker path) and read in process by
:func:`replayed_claims` (the harness path): both give the model arm the same proposals.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.infra.errors import EngramFailure

_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class AnswersError(EngramFailure, ValueError):
    """A file of answers that cannot be used: names the line or what to pass."""

    code = "invalid_answers"


class StaleAnswers(EngramFailure, ValueError):
    """Answers recorded for another prompt than the one in force."""

    code = "stale_answers"


def answer_key(role: str, text: str) -> str:
    """The key of one message's answer: SHA-256 of role, NUL, text (as the arm sends it)."""
    return hashlib.sha256(f"{role}\0{text}".encode()).hexdigest()


@dataclass(slots=True)
class RecordedAnswers:
    """Every recorded answer of a file, and the prompt it answered."""

    path: Path
    prompt_sha256: str
    claims: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def stale_for(self, prompt_sha256: str) -> str | None:
        """Why these answers do not answer ``prompt_sha256`` (the prompt in force), if not."""
        if self.prompt_sha256 == prompt_sha256:
            return None
        return (
            f"{self.path} answers prompt {self.prompt_sha256[:12]}…, the prompt in force is "
            f"{prompt_sha256[:12]}…: record the answers again, or accept stale answers "
            "(--accept-stale) and read the numbers as the old prompt's"
        )

    def reply(self, role: str, text: str) -> str | None:
        """The model's reply text (a claims envelope) for one message; None when unrecorded."""
        found = self.claims.get(answer_key(role, text))
        return None if found is None else json.dumps({"claims": found})


def load_answers(path: Path, prompt_sha256: str | None = None) -> RecordedAnswers:
    """The answers of ``path``; ``prompt_sha256`` names their prompt when the file has no
    header line (and must agree with it when it has one).

    Raises ``OSError`` when unreadable and :class:`AnswersError` when malformed or unnamed.
    """
    header: str | None = None
    claims: dict[str, list[dict[str, Any]]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise AnswersError(f"{path}:{number}: not JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise AnswersError(f"{path}:{number}: not an object")
            if "prompt_sha256" in row and "key" not in row:
                header = _digest(row["prompt_sha256"], f"{path}:{number}")
                continue
            key, found = row.get("key"), row.get("claims")
            if not isinstance(key, str) or not _DIGEST.match(key) or not isinstance(found, list):
                raise AnswersError(f"{path}:{number}: needs a 64-hex key and a claims list")
            claims[key] = found
    given = _digest(prompt_sha256, "--answers-prompt") if prompt_sha256 else None
    if header and given and header != given:
        raise AnswersError(f"{path} says prompt {header[:12]}…, --answers-prompt {given[:12]}…")
    digest = header or given
    if digest is None:
        raise AnswersError(
            f"{path} does not say which prompt it answers: pass --answers-prompt SHA256 "
            "(the SHA-256 of the prompt file the answers were recorded for)"
        )
    return RecordedAnswers(path, digest, claims)


def _digest(value: object, where: str) -> str:
    if not isinstance(value, str) or not _DIGEST.match(value.lower()):
        raise AnswersError(f"{where}: a prompt digest is 64 hex characters")
    return value.lower()
