"""The OpenAI Agents SDK through the real openai-agents at the locked version: the example agent
runs against a scripted chat-completions server on loopback, calls Engram's recall tool, answers
from it, and its session's items are turns read back for the next run — for the principal the
token names only."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, FunctionTool, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from engram.client import AsyncEngram
from engram.integrations.agents import EngramSession, engram_tools
from tests.e2e.integrations.conftest import Stack
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.support.episodes import turn

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[3]


def tool_call(name: str, arguments: dict[str, Any], call_id: str) -> Reply:
    body = {
        "id": "chatcmpl-tool",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }
    return Reply(body=json.dumps(body))


def script(body: Any) -> Reply:
    """Recall for a question about where the person lives, answer from what the tool said,
    and say what the model was given for anything else."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return Reply.text(f"From memory: {last['content']}")
    if last["role"] == "user" and str(last["content"]).startswith("Untrue: "):
        belief = str(last["content"]).removeprefix("Untrue: ")
        return tool_call("correct", {"belief_id": belief, "kind": "untrue"}, "call_2")
    if last["role"] == "user" and "live" in str(last["content"]):
        return tool_call("recall", {"query": str(last["content"])}, "call_1")
    return Reply.text(f"I was given {len(body['messages'])} messages.")


async def seed(stack: Stack, project: str) -> None:
    async with AsyncEngram(stack.url, token=stack.ana) as ana:
        t = stack.isolated.tenant
        [where] = await ana.append_turns([turn(t, "ana", project, "I live in Lisbon.")])
        await ana.wait_formed(where, timeout_s=90)


async def test_the_example_agent_recalls_through_its_tool_and_keeps_its_session(
    stack: Stack,
) -> None:
    await seed(stack, "ag")
    async with FakeOpenAIServer(script=script) as server:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(REPO / "examples" / "openai_agents.py"),
            "--engram-url",
            stack.url,
            "--model-url",
            server.base_url,
            "--project",
            "ag",
            "--session",
            "run-1",
            "Where do I live?",
            "Thanks!",
            env={**os.environ, "ENGRAM_TOKEN": stack.ana, "OPENAI_API_KEY": "test"},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=120)
        assert process.returncode == 0, err.decode()
        first, second = out.decode().splitlines()
        assert first.startswith("From memory: ") and "I live in Lisbon" in first
        recalled = json.loads(first.removeprefix("From memory: "))
        assert recalled[0]["believed"].endswith("lives in Lisbon")
        assert recalled[0]["quotes"] == ["I live in Lisbon"]
        # the second run was given the first run's items, read back from Engram
        assert second == "I was given 6 messages."
        given = server.requests[-1].messages
        assert [m["role"] for m in given] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
        ]
        assert given[2]["tool_calls"][0]["function"]["name"] == "recall"

    async with AsyncEngram(stack.url, token=stack.ana) as ana:
        items = await EngramSession(ana, project="ag", session_id="run-1").get_items()
        kinds = [i.get("type", i.get("role")) for i in items]
        assert kinds == [
            "user",
            "function_call",
            "function_call_output",
            "assistant",
            "user",
            "assistant",
        ]
        last_two = await EngramSession(ana, project="ag", session_id="run-1").get_items(limit=2)
        assert last_two == items[-2:]
        with pytest.raises(NotImplementedError):
            await EngramSession(ana, project="ag", session_id="run-1").pop_item()
        # the user's words formed nothing new from the tool's output: only ana's own words speak
        lives = [b.object for b in await ana.beliefs(project="ag") if b.relation == "lives_in"]
        assert lives == ["Lisbon"]


async def test_the_tools_act_for_the_tokens_principal_only(stack: Stack) -> None:
    await seed(stack, "ag2")
    set_tracing_disabled(True)
    async with (
        FakeOpenAIServer(script=script) as server,
        AsyncEngram(stack.url, token=stack.ana) as ana,
        AsyncEngram(stack.url, token=stack.bo) as bo,
    ):
        model = OpenAIChatCompletionsModel(
            model="scripted", openai_client=AsyncOpenAI(base_url=server.base_url, api_key="t")
        )
        agent = Agent(name="a", model=model, tools=engram_tools(bo, project="ag2"))
        result = await Runner.run(agent, "Where do I live?")
        assert result.final_output == "From memory: []", "bo's token recalls none of ana's"

        [lives] = [b for b in await ana.beliefs(project="ag2") if b.relation == "lives_in"]
        schemas = [
            t.params_json_schema
            for t in engram_tools(bo, project="ag2")
            if isinstance(t, FunctionTool)
        ]
        assert len(schemas) == 3 and "principal" not in json.dumps(schemas)
        refused = await Runner.run(agent, f"Untrue: {lives.belief_id}")
        assert "Engram refused: 404" in str(refused.final_output)
        assert (await ana.belief(lives.belief_id)).belief.status == "active"
        session = EngramSession(bo, project="ag2", session_id="bo-chat")
        await session.add_items([{"role": "user", "content": "I collect stamps."}])
        assert await EngramSession(ana, project="ag2", session_id="bo-chat").get_items() == []
        assert await session.get_items() == [{"role": "user", "content": "I collect stamps."}]
