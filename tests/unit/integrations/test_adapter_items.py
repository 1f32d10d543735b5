"""What the adapters store and read back, without services: a framework's message becomes an
Engram message with the role that says who spoke, and reads back as the same kind of message."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engram.integrations import agents, langchain
from engram.schemas.api import SessionMessage
from engram.schemas.common import Role


def stored(role: Role, content: str, author: str | None = None, ordinal: int = 0) -> SessionMessage:
    return SessionMessage(
        event_id=uuid.UUID(int=1),
        message_ordinal=ordinal,
        role=role,
        author=author,
        project="p",
        session="s",
        occurred_at=datetime(2026, 12, 6, tzinfo=UTC),
        partition=0,
        offset=7,
        content=content,
    )


def test_langchain_messages_keep_who_spoke_and_their_words() -> None:
    said = [
        langchain.said_of(m)
        for m in (
            HumanMessage("I live in Lisbon."),
            AIMessage([{"type": "text", "text": "Noted."}]),
            SystemMessage("Be brief."),
            ToolMessage("42", tool_call_id="c1", name="calc"),
        )
    ]
    assert [(s.role, s.content, s.author) for s in said if s] == [
        (Role.USER, "I live in Lisbon.", None),
        (Role.ASSISTANT, "Noted.", None),
        (Role.SYSTEM, "Be brief.", None),
        (Role.TOOL, "42", "calc"),
    ]
    assert langchain.said_of(AIMessage("", tool_calls=[])) is None, "no words, nothing appended"
    back = [langchain.message_of(stored(s.role, s.content, s.author)) for s in said if s]
    assert [type(m) for m in back] == [HumanMessage, AIMessage, SystemMessage, ToolMessage]
    assert back[0].id == f"{uuid.UUID(int=1)}:0"


def test_a_langchain_history_refuses_to_clear() -> None:
    history = langchain.EngramChatMessageHistory(
        "http://127.0.0.1:9", token="t", project="p", session="s"
    )
    with pytest.raises(NotImplementedError, match="correct or delete the belief"):
        history.clear()


def test_agents_items_round_trip_through_engram_messages() -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "Where do I live?"},
        {"type": "function_call", "call_id": "call_1", "name": "recall", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "[]"},
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "In Lisbon.", "annotations": []}],
        },
        {"type": "reasoning", "id": "r1", "summary": []},
    ]
    said = [agents.said_of(i) for i in items]
    assert said[-1] is None, "a reasoning item holds no conversation"
    assert [s.role for s in said if s] == [Role.USER, Role.TOOL, Role.TOOL, Role.ASSISTANT]
    back = [agents.item_of(stored(s.role, s.content, s.author)) for s in said if s]
    assert back == [
        {"role": "user", "content": "Where do I live?"},
        {"type": "function_call", "call_id": "call_1", "name": "recall", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "[]"},
        {"role": "assistant", "content": "In Lisbon."},
    ]
    assert agents.item_of(stored(Role.TOOL, "x", author="a calculator")) is None
