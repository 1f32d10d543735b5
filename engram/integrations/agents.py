"""The OpenAI Agents SDK (``pip install "engram[agents]"``): a session whose items are turns on
Engram's episodic log, and ``recall``, ``remember`` and ``correct`` as function tools.

    engram = AsyncEngram(URL, token=TOKEN)
    agent = Agent(name="helper", tools=engram_tools(engram, project="garden"))
    await Runner.run(agent, "…", session=EngramSession(engram, project="garden", session_id="s1"))

:class:`EngramSession` is the SDK's session protocol. ``add_items`` appends a run's items as one
turn of the principal the token names: a user message as their own words (``user``), an
assistant, system or developer message as ``assistant`` or ``system``; a function call and its
output as ``tool`` messages (never the principal's words), their call id and name kept in the
message's ``author`` so ``get_items`` gives the model back a call with its output. Reasoning and
other items that carry no conversation are not kept. ``get_items`` reads the session back from
the message index, so what Engram forgot is not given to the model again; ``pop_item`` and
``clear_session`` are refused: the log is append-only (the SDK calls ``pop_item`` only to rewind
after a server-side conversation conflict, and logs the refusal).

The tools take no principal: the server binds it from the token, so an agent reaches only the
memory of the person its token names.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, Literal

from agents import RunContextWrapper, Tool, TResponseInputItem, function_tool
from agents.memory import SessionSettings

from engram.client import AsyncEngram, EngramError
from engram.integrations.turns import FORGET_INSTEAD, Conversation, Said, refused
from engram.schemas.api import RecalledBelief, RecallResults, SessionMessage
from engram.schemas.common import Role

CALL = "function_call"
OUTPUT = "function_call_output"
_MESSAGE_ROLES = {
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "system": Role.SYSTEM,
    "developer": Role.SYSTEM,
}


def _text(content: object) -> str:
    """A message item's words: its string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def said_of(item: Mapping[str, Any]) -> Said | None:
    """The Engram message an SDK item is; None for one that holds no conversation."""
    kind = item.get("type", "message")
    if kind == "message" and item.get("role") in _MESSAGE_ROLES:
        text = _text(item.get("content"))
        return Said(_MESSAGE_ROLES[item["role"]], text) if text else None
    if kind == CALL:
        author = f"{CALL}:{item['call_id']}:{item['name']}"
        return Said(Role.TOOL, str(item.get("arguments", "")), author=author)
    if kind == OUTPUT:
        output = item.get("output")
        text = output if isinstance(output, str) else json.dumps(output)
        return Said(Role.TOOL, text, author=f"{OUTPUT}:{item['call_id']}")
    return None


def item_of(found: SessionMessage) -> TResponseInputItem | None:
    """An SDK input item from a message read back; None for a tool message no SDK session
    wrote (it has no call to belong to)."""
    if found.role is Role.TOOL:
        kind, _, rest = (found.author or "").partition(":")
        if kind == CALL:
            call_id, _, name = rest.partition(":")
            call: TResponseInputItem = {
                "type": "function_call",
                "call_id": call_id,
                "name": name,
                "arguments": found.content,
            }
            return call
        if kind == OUTPUT:
            output: TResponseInputItem = {
                "type": "function_call_output",
                "call_id": rest,
                "output": found.content,
            }
            return output
        return None
    role: Literal["user", "assistant", "system"] = found.role.value  # type: ignore[assignment]
    message: TResponseInputItem = {"role": role, "content": found.content}
    return message


class EngramSession:
    """An Agents SDK session kept as turns of ``session_id`` in ``project``, for the principal
    the client's token names. Each ``add_items`` waits (up to ``wait_s``) until the message
    index holds the turn, so the next run's ``get_items`` sees it."""

    session_settings: SessionSettings | None = None

    def __init__(
        self, engram: AsyncEngram, *, project: str, session_id: str, wait_s: float = 30.0
    ) -> None:
        self.session_id = session_id
        self._conversation = Conversation(
            engram, project=project, session=session_id, wait_s=wait_s
        )

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        talk = self._conversation
        found = await talk.engram.session_messages(talk.session, project=talk.project)
        items = [i for i in map(item_of, found) if i is not None]
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        said = [s for s in (said_of(dict(i)) for i in items) if s is not None]
        await self._conversation.append(said)

    async def pop_item(self) -> TResponseInputItem | None:
        raise refused("Removing a session's last item", FORGET_INSTEAD)

    async def clear_session(self) -> None:
        raise refused("Clearing a session", FORGET_INSTEAD)


def compact(results: RecallResults) -> list[dict[str, Any]]:
    """Recall's hits as the tool answers them: what is believed with its quotes and id, then
    the messages with their words, session and time."""
    found: list[dict[str, Any]] = []
    for hit in results.hits:
        if isinstance(hit, RecalledBelief):
            b = hit.belief
            found.append(
                {
                    "belief_id": str(b.belief_id),
                    "believed": b.readable,
                    "quotes": [e.quote for e in b.evidence],
                    "since": b.valid_from.isoformat(),
                }
            )
        else:
            found.append(
                {
                    "said": hit.content,
                    "role": hit.role.value,
                    "session": hit.session,
                    "at": hit.occurred_at.isoformat(),
                }
            )
    return found


def tool_failure(context: RunContextWrapper[Any], error: Exception) -> str:
    """What the model is told when a tool fails: Engram's own reason (a belief that is not this
    person's, a correction that cannot apply, the API out of reach), so it can say what to do;
    the SDK's default hides it behind "An error occurred"."""
    if isinstance(error, EngramError):
        return f"Engram refused: {error}"
    return f"the tool failed: {type(error).__name__}: {error}"


def engram_tools(engram: AsyncEngram, *, project: str, limit: int = 8) -> list[Tool]:
    """``recall``, ``remember`` and ``correct`` as function tools over ``engram``'s token: the
    principal is the token's, never an argument the model could change."""

    @function_tool(failure_error_function=tool_failure)
    async def recall(query: str) -> str:
        """Look up what is known about the person: what Engram believes (with the quotes it
        came from and each belief's id) and the messages that answer the question.

        Args:
            query: the question, in plain words.
        """
        results = await engram.recall(query, project=project, limit=limit)
        return json.dumps(compact(results))

    @function_tool(failure_error_function=tool_failure)
    async def remember(text: str) -> str:
        """Remember something in the person's own words, when they ask you to.

        Args:
            text: what they said to remember, in their words.
        """
        where = await engram.remember(text, project=project)
        return f"remembered (offset {where.offset}); it applies once formed"

    @function_tool(failure_error_function=tool_failure)
    async def correct(
        belief_id: str,
        kind: Literal["untrue", "changed", "not_here", "unspecified"],
        replacement: str | None = None,
    ) -> str:
        """Correct a belief the person says is wrong: ``untrue`` retires it, ``changed``
        replaces its value with ``replacement``, ``not_here`` stops it applying in this
        project, ``unspecified`` flags it for review.

        Args:
            belief_id: the belief's id, as recall gave it.
            kind: untrue, changed, not_here or unspecified.
            replacement: the new value, only for kind "changed".
        """
        where = await engram.correct(
            uuid.UUID(belief_id), kind, replacement=replacement, project=project
        )
        return f"correction appended (offset {where.offset}); it applies once formed"

    return [recall, remember, correct]
