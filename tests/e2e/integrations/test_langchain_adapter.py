"""LangChain through the real langchain-core at the locked version: a chain with
``RunnableWithMessageHistory`` keeps its history as turns on the log, formation forms from
them, a deletion takes its message out of the history read back, the retriever answers with
quotes — and a token reaches only its own principal."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables.history import RunnableWithMessageHistory
from pydantic import SecretStr

from engram.client import AsyncEngram
from engram.integrations.langchain import EngramChatMessageHistory, EngramRetriever
from tests.e2e.integrations.conftest import Stack
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.support.conditions import wait_until
from tests.support.episodes import turn

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[3]


async def test_a_chains_history_is_turns_that_form_correct_and_forget(stack: Stack) -> None:
    def history(session_id: str) -> EngramChatMessageHistory:
        return EngramChatMessageHistory(
            stack.url, token=stack.ana, project="lc", session=session_id
        )

    model = GenericFakeChatModel(messages=iter([AIMessage("Lisbon is lovely."), AIMessage("Ok.")]))
    chain = RunnableWithMessageHistory(model, history)
    config = {"configurable": {"session_id": "chat-1"}}
    answer = await chain.ainvoke("I live in Lisbon.", config=config)  # type: ignore[arg-type]
    assert answer.content == "Lisbon is lovely."
    await chain.ainvoke("I prefer dark mode.", config=config)  # type: ignore[arg-type]

    read = await history("chat-1").aget_messages()
    assert [(type(m), m.text) for m in read] == [
        (HumanMessage, "I live in Lisbon."),
        (AIMessage, "Lisbon is lovely."),
        (HumanMessage, "I prefer dark mode."),
        (AIMessage, "Ok."),
    ]
    assert len({m.id for m in read}) == 4, "each message read back has its own stable id"
    blocking = await asyncio.to_thread(lambda: history("chat-1").messages)
    assert [m.text for m in blocking] == [m.text for m in read]
    with pytest.raises(NotImplementedError, match="episodic log"):
        history("chat-1").clear()

    async with AsyncEngram(stack.url, token=stack.ana) as ana:

        async def formed() -> bool:
            found = {b.relation for b in await ana.beliefs(project="lc")}
            return "lives_in" in found and len(found) >= 2

        await wait_until(formed, timeout_s=90, what="the history's turns form beliefs")
        beliefs = await ana.beliefs(project="lc")
        lives = next(b for b in beliefs if b.relation == "lives_in")
        assert lives.object == "Lisbon" and lives.evidence[0].quote == "I live in Lisbon"
        dark = next(b for b in beliefs if b.relation != "lives_in")

        retriever = EngramRetriever(base_url=stack.url, token=SecretStr(stack.ana), project="lc")
        docs = await retriever.ainvoke("Where do I live?")
        first = docs[0]
        assert first.metadata["kind"] == "belief"
        assert first.metadata["belief_id"] == str(lives.belief_id)
        assert first.metadata["quote"] == "I live in Lisbon"
        said = [d for d in docs if d.metadata["kind"] == "message"]
        assert said and said[0].page_content == "I live in Lisbon."
        assert said[0].metadata["session"] == "chat-1" and said[0].metadata["time"]
        assert said[0].metadata["role"] == "user"

        # a deletion takes the message it quoted out of what the history reads back
        await ana.wait_formed(await ana.delete(dark.belief_id), timeout_s=60)

        async def gone() -> bool:
            texts = [m.text for m in await history("chat-1").aget_messages()]
            return "I prefer dark mode." not in texts and "I live in Lisbon." in texts

        await wait_until(gone, timeout_s=60, what="the deleted belief's message leaves the history")


async def test_a_token_reaches_only_its_own_principal_through_the_adapters(stack: Stack) -> None:
    ana = EngramChatMessageHistory(stack.url, token=stack.ana, project="lc2", session="shared")
    bo = EngramChatMessageHistory(stack.url, token=stack.bo, project="lc2", session="shared")
    await ana.aadd_messages([HumanMessage("My sister Marta visits in May.")])
    await bo.aadd_messages(
        [HumanMessage("I collect stamps."), ToolMessage("ok", tool_call_id="c1")]
    )

    assert [m.text for m in await ana.aget_messages()] == ["My sister Marta visits in May."]
    assert [m.text for m in await bo.aget_messages()] == ["I collect stamps.", "ok"]
    bo_recall = EngramRetriever(base_url=stack.url, token=SecretStr(stack.bo), project="lc2")
    # bo's recall may answer with bo's own words (the semantic list ranks every message in
    # scope once the vectors are made), never with ana's
    bo_found = await bo_recall.ainvoke("When does Marta visit?")
    assert {d.page_content for d in bo_found} <= {"I collect stamps."}
    ana_recall = EngramRetriever(base_url=stack.url, token=SecretStr(stack.ana), project="lc2")
    assert [d.page_content for d in await ana_recall.ainvoke("When does Marta visit?")] != []
    assert all("stamps" not in d.page_content for d in await ana_recall.ainvoke("stamps"))


def _say_what_was_given(body: Any) -> Reply:
    messages = body["messages"]
    return Reply.text(f"{len(messages)} messages; {messages[0]['content']!r}")


async def test_the_example_chat_recalls_and_keeps_its_history_in_engram(stack: Stack) -> None:
    async with AsyncEngram(stack.url, token=stack.ana) as ana:
        t = stack.isolated.tenant
        [where] = await ana.append_turns([turn(t, "ana", "lc3", "I live in Lisbon.", session="x")])
        await ana.wait_formed(where, timeout_s=90)
        await ana.wait_indexed(where, timeout_s=90)
    async with FakeOpenAIServer(script=_say_what_was_given) as server:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(REPO / "examples" / "langchain_memory.py"),
            *("--engram-url", stack.url, "--model-url", server.base_url, "--project", "lc3"),
            *("--session", "chat-9", "Where do I live?", "Thanks!"),
            env={**os.environ, "ENGRAM_TOKEN": stack.ana, "OPENAI_API_KEY": "test"},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=120)
        assert process.returncode == 0, err.decode()
    first, second = out.decode().splitlines()
    assert first.startswith("2 messages;") and "ana lives in Lisbon ('I live in Lisbon')" in first
    assert second.startswith("4 messages;"), "the second call had the first from Engram's history"
    async with AsyncEngram(stack.url, token=stack.ana) as ana:
        said = await ana.session_messages("chat-9", project="lc3")
        assert [m.role.value for m in said] == ["user", "assistant", "user", "assistant"]
