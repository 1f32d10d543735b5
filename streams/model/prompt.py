"""Rendering the extraction prompt for the model arm.

The prompt file is read, validated and digested by :mod:`policies.prompt` (its bytes are part
of the policy version). Rendering is pure: the vocabulary goes into the system prompt, and the
message goes into the user turn between two markers carrying a random fence id that the
message's own text does not contain.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date

from engram.formation.vocabulary import Relation
from engram.policies.prompt import RELATIONS_PLACEHOLDER, SECTIONS, ExtractionPrompt
from engram.schemas.episodes import Message
from engram.streams.model.context import ContextMessage

FENCE_BYTES = 12
"""A fence id is ``FENCE_BYTES`` random bytes in hex: 24 characters."""
FENCE_ATTEMPTS = 16
_FENCE_ID = re.compile(r"^[0-9a-f]{24}$")


def render_relations(relations: Sequence[Relation]) -> str:
    """One line per relation, in the vocabulary's order: name, object kind, description."""
    return "\n".join(f"- {r.name} ({r.object_kind}): {r.description}" for r in relations)


def render_system_prompt(prompt: ExtractionPrompt, relations: Sequence[Relation]) -> str:
    """The system turn: the sections in their fixed order, ``data_boundary`` last."""
    parts = [prompt.section(name) for name in SECTIONS]
    index = SECTIONS.index("relations")
    parts[index] = parts[index].replace(RELATIONS_PLACEHOLDER, render_relations(relations))
    return "\n\n".join(parts)


def render_user_message(
    message: Message,
    fence_id: str,
    *,
    context: Sequence[ContextMessage] = (),
    occurred_on: date | None = None,
) -> str:
    """The user turn: the episode date, the context block, the speaker's role, then the content
    between two fence markers.

    The date is the episode's event time (never the clock), so "yesterday" means the same day
    in every replay. Earlier messages of the session go in a block of their own, before the
    message and marked as context: the prompt tells the model to quote only the message.
    """
    texts = [message.content, *(m.content for m in context)]
    if any(fence_id.lower() in text.lower() for text in texts):
        raise ValueError("the fence id occurs in the message; choose it with new_fence")
    lines: list[str] = []
    if occurred_on is not None:
        lines.append(f"Episode date: {occurred_on.isoformat()}")
    if context:
        lines.append(f"<<<CONTEXT {fence_id}>>>")
        lines.extend(f"{m.role.value}: {m.content}" for m in context)
        lines.append(f"<<<END CONTEXT {fence_id}>>>")
    lines += [
        f"Speaker: {message.role.value}",
        f"<<<MESSAGE {fence_id}>>>",
        message.content,
        f"<<<END {fence_id}>>>",
    ]
    return "\n".join(lines)


def new_fence(content: str, token_hex: Callable[[int], str]) -> str:
    """A 24-hex-character fence id that ``content`` does not contain, in any case.

    Chosen after the content is known, and chosen again if the content happens to hold it, so
    a fixed delimiter written into the content can never close the block early. ``token_hex``
    is the random source (``secrets.token_hex`` in production).
    """
    folded = content.lower()
    for _ in range(FENCE_ATTEMPTS):
        fence_id = token_hex(FENCE_BYTES)
        if not _FENCE_ID.match(fence_id):
            raise ValueError("the random source must return 24 lower-case hex characters")
        if fence_id not in folded:
            return fence_id
    raise ValueError(f"no fence id outside the content after {FENCE_ATTEMPTS} attempts")
