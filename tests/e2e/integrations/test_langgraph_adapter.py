"""LangGraph through the real langgraph at the locked version: the example graph, with an
in-memory checkpointer, recalls before its model (a scripted chat-completions server on
loopback) and appends each turn after it, on the thread's Engram session — for the principal
the token names only."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from engram.client import AsyncEngram
from engram.integrations.langgraph import EngramMemory, EngramState
from tests.e2e.integrations.conftest import Stack
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.support.episodes import turn

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[3]


def script(body: Any) -> Reply:
    """Answer with what the model was given: its system message and how many messages."""
    messages = body["messages"]
    return Reply.text(f"{len(messages)} messages; {messages[0]['content']!r}")


async def test_the_example_graph_recalls_before_the_model_and_appends_each_turn(
    stack: Stack,
) -> None:
    async with AsyncEngram(stack.url, token=stack.ana) as ana:
        t = stack.isolated.tenant
        [where] = await ana.append_turns([turn(t, "ana", "lg", "I live in Lisbon.", session="x")])
        await ana.wait_formed(where, timeout_s=90)
    async with FakeOpenAIServer(script=script) as server:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(REPO / "examples" / "langgraph_memory.py"),
            "--engram-url",
            stack.url,
            "--model-url",
            server.base_url,
            "--project",
            "lg",
            "--thread",
            "thread-1",
            "Where do I live?",
            "Thanks!",
            env={**os.environ, "ENGRAM_TOKEN": stack.ana, "OPENAI_API_KEY": "test"},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=120)
        assert process.returncode == 0, err.decode()
    first, second = out.decode().splitlines()
    assert first.startswith("2 messages;") and "lives in Lisbon" in first
    assert 'said: "I live in Lisbon"' in first
    # the checkpointer kept the thread: the second call had the first question and answer
    assert second.startswith("4 messages;")
    async with AsyncEngram(stack.url, token=stack.ana) as ana:
        said = await ana.session_messages("thread-1", project="lg")
        assert [(m.role.value, m.content) for m in said][::2] == [
            ("user", "Where do I live?"),
            ("user", "Thanks!"),
        ]
        assert [m.role.value for m in said] == ["user", "assistant", "user", "assistant"]


async def test_a_graph_with_another_token_recalls_and_records_for_that_principal_only(
    stack: Stack,
) -> None:
    async with (
        AsyncEngram(stack.url, token=stack.ana) as ana,
        AsyncEngram(stack.url, token=stack.bo) as bo,
    ):
        t = stack.isolated.tenant
        [where] = await ana.append_turns([turn(t, "ana", "lg2", "I live in Lisbon.", session="x")])
        await ana.wait_formed(where, timeout_s=90)
        memory = EngramMemory(bo, project="lg2")

        async def model(state: EngramState) -> dict[str, Any]:
            return {"messages": [AIMessage(f"recalled {len(state.get('recalled', []))}")]}

        graph = StateGraph(EngramState)
        graph.add_node("recall", memory.recall)
        graph.add_node("model", model)
        graph.add_node("record", memory.record)
        graph.add_edge(START, "recall")
        graph.add_edge("recall", "model")
        graph.add_edge("model", "record")
        graph.add_edge("record", END)
        app = graph.compile(checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "x"}}
        state = await app.ainvoke({"messages": [HumanMessage("Where do I live?")]}, config)
        assert state["messages"][-1].text == "recalled 0"
        assert [m.content for m in await bo.session_messages("x", project="lg2")] == [
            "Where do I live?",
            "recalled 0",
        ]
        assert [m.content for m in await ana.session_messages("x", project="lg2")] == [
            "I live in Lisbon."
        ]
