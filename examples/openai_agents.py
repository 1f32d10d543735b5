"""An OpenAI Agents SDK agent with Engram's memory: the run's items kept as turns of the
session, and recall, remember and correct as its tools, acting for the person the token names.

    pip install "engram[agents]"
    engram tokens create --tenant default --principal ana     # prints the token once
    engram api &  engram worker &
    ENGRAM_TOKEN=engram_… python examples/openai_agents.py "Where do I live?"

Any OpenAI-compatible chat completions endpoint serves the model: ``--model-url`` (a local
server; the tests run this file against a scripted one on loopback) and ``--model``; the key is
``OPENAI_API_KEY``. Tracing is off: nothing leaves for OpenAI's trace store.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from engram.client import AsyncEngram
from engram.integrations.agents import EngramSession, engram_tools

INSTRUCTIONS = (
    "You help one person. Before answering about them, call recall; when they ask you to "
    "remember something, call remember with their words; when they say a belief is wrong, "
    "call correct with its id. Cite the quotes recall gives."
)


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="An Agents SDK agent with Engram's memory.")
    parser.add_argument("questions", nargs="+", help="what the person says, one run each")
    parser.add_argument(
        "--engram-url", default=os.environ.get("ENGRAM_URL", "http://127.0.0.1:8080")
    )
    parser.add_argument("--model-url", default=os.environ.get("OPENAI_BASE_URL"))
    parser.add_argument("--model", default=os.environ.get("ENGRAM_EXAMPLE_MODEL", "gpt-4.1-mini"))
    parser.add_argument("--project", default="garden-app")
    parser.add_argument("--session", default="agents-1")
    args = parser.parse_args(argv)
    set_tracing_disabled(True)
    model = OpenAIChatCompletionsModel(
        model=args.model,
        openai_client=AsyncOpenAI(
            base_url=args.model_url, api_key=os.environ.get("OPENAI_API_KEY", "not-needed")
        ),
    )
    async with AsyncEngram(args.engram_url, token=os.environ["ENGRAM_TOKEN"]) as engram:
        agent = Agent(
            name="assistant",
            instructions=INSTRUCTIONS,
            model=model,
            tools=engram_tools(engram, project=args.project),
        )
        session = EngramSession(engram, project=args.project, session_id=args.session)
        for question in args.questions:
            result = await Runner.run(agent, question, session=session)
            print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
