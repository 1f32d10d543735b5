"""A LangGraph graph with Engram as its long-term memory: recall before the model, append the
turn after it, beside an in-memory checkpointer that keeps the thread's own state.

    pip install "engram[langgraph]"
    engram tokens create --tenant default --principal ana     # prints the token once
    engram api &  engram worker &
    ENGRAM_TOKEN=engram_… python examples/langgraph_memory.py "Where do I live?"

The model is any OpenAI-compatible chat completions endpoint (``--model-url``, ``--model``,
``OPENAI_API_KEY``); the tests run this file against a scripted one on loopback. Each question
is one invocation of the graph on one thread (``--thread``), which is also the Engram session
its turns are appended to.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from openai import AsyncOpenAI

from engram.client import AsyncEngram
from engram.integrations.langgraph import EngramMemory, EngramState

ROLES = {"human": "user", "ai": "assistant", "system": "system"}


def model_node(client: AsyncOpenAI, model: str) -> Any:
    """The model: what Engram recalled as the system message, then the thread's messages."""

    async def call(state: EngramState) -> dict[str, list[BaseMessage]]:
        memory = "\n".join(state.get("recalled", [])) or "nothing recalled"
        messages: list[Any] = [
            {"role": "system", "content": f"What you know about the person:\n{memory}"}
        ]
        messages += [
            {"role": ROLES[m.type], "content": m.text} for m in state["messages"] if m.type in ROLES
        ]
        answer = await client.chat.completions.create(model=model, messages=messages)
        return {"messages": [AIMessage(answer.choices[0].message.content or "")]}

    return call


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A LangGraph graph with Engram's memory.")
    parser.add_argument("questions", nargs="+", help="what the person says, one invocation each")
    parser.add_argument(
        "--engram-url", default=os.environ.get("ENGRAM_URL", "http://127.0.0.1:8080")
    )
    parser.add_argument("--model-url", default=os.environ.get("OPENAI_BASE_URL"))
    parser.add_argument("--model", default=os.environ.get("ENGRAM_EXAMPLE_MODEL", "gpt-4.1-mini"))
    parser.add_argument("--project", default="garden-app")
    parser.add_argument("--thread", default="graph-1")
    args = parser.parse_args(argv)
    openai = AsyncOpenAI(
        base_url=args.model_url, api_key=os.environ.get("OPENAI_API_KEY", "not-needed")
    )
    async with AsyncEngram(args.engram_url, token=os.environ["ENGRAM_TOKEN"]) as engram:
        memory = EngramMemory(engram, project=args.project)
        steps = [
            ("recall", memory.recall),
            ("model", model_node(openai, args.model)),
            ("record", memory.record),
        ]
        graph = StateGraph(EngramState).add_sequence(steps).add_edge(START, "recall")
        app = graph.compile(checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": args.thread}}
        for question in args.questions:
            state = await app.ainvoke({"messages": [("user", question)]}, config)
            print(state["messages"][-1].text)


if __name__ == "__main__":
    asyncio.run(main())
