"""A LangChain chat with Engram's memory: the history kept as turns on Engram's log, and what
Engram recalls for each question put before the model.

    pip install "engram[langchain]"
    engram tokens create --tenant default --principal ana     # prints the token once
    engram api &  engram worker &
    ENGRAM_TOKEN=engram_… python examples/langchain_memory.py "Where do I live?"

The model is any OpenAI-compatible chat completions endpoint (``--model-url``, ``--model``,
``OPENAI_API_KEY``), called through the openai client Engram already depends on; with
``langchain-openai`` installed, ``ChatOpenAI`` takes its place unchanged. The tests run this
file against a scripted server on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from openai import AsyncOpenAI
from pydantic import SecretStr

from engram.integrations.langchain import EngramChatMessageHistory, EngramRetriever

ROLES = {"human": "user", "ai": "assistant", "system": "system"}


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A LangChain chat with Engram's memory.")
    parser.add_argument("questions", nargs="+", help="what the person says, one call each")
    parser.add_argument(
        "--engram-url", default=os.environ.get("ENGRAM_URL", "http://127.0.0.1:8080")
    )
    parser.add_argument("--model-url", default=os.environ.get("OPENAI_BASE_URL"))
    parser.add_argument("--model", default=os.environ.get("ENGRAM_EXAMPLE_MODEL", "gpt-4.1-mini"))
    parser.add_argument("--project", default="garden-app")
    parser.add_argument("--session", default="chat-1")
    args = parser.parse_args(argv)
    token = os.environ["ENGRAM_TOKEN"]
    openai = AsyncOpenAI(
        base_url=args.model_url, api_key=os.environ.get("OPENAI_API_KEY", "not-needed")
    )
    retriever = EngramRetriever(
        base_url=args.engram_url, token=SecretStr(token), project=args.project, k=4
    )

    async def model(messages: list[BaseMessage]) -> AIMessage:
        """Recall for the latest question, then the model with what was recalled and the
        history (RunnableWithMessageHistory passes history + the new message)."""
        recalled = await retriever.ainvoke(messages[-1].text)
        memory = "\n".join(f"- {d.page_content} ({d.metadata['quote']!r})" for d in recalled)
        prompt: list[Any] = [{"role": "system", "content": f"What you know:\n{memory}"}]
        prompt += [{"role": ROLES[m.type], "content": m.text} for m in messages if m.type in ROLES]
        answer = await openai.chat.completions.create(model=args.model, messages=prompt)
        return AIMessage(answer.choices[0].message.content or "")

    chain = RunnableWithMessageHistory(
        RunnableLambda(model),
        lambda session_id: EngramChatMessageHistory(
            args.engram_url, token=token, project=args.project, session=session_id
        ),
    )
    config: Any = {"configurable": {"session_id": args.session}}
    for question in args.questions:
        answer = await chain.ainvoke(question, config=config)
        print(answer.text)


if __name__ == "__main__":
    asyncio.run(main())
