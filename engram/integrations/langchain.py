"""LangChain (``pip install "engram[langchain]"``): a chat message history whose messages are
turns on Engram's episodic log, and a retriever over recall.

    history = EngramChatMessageHistory(URL, token=TOKEN, project="garden", session="s1")
    retriever = EngramRetriever(base_url=URL, token=TOKEN, k=4)
    chain = RunnableWithMessageHistory(model, lambda session_id: history)

:class:`EngramChatMessageHistory` appends each ``add_messages`` call as one turn of the token's
principal — a ``HumanMessage`` as the principal's own words (``user``, the only words formation
takes as theirs), an ``AIMessage`` as ``assistant``, a ``SystemMessage`` as ``system``, a
``ToolMessage`` as ``tool`` — so formation forms from it and corrections and forgetting apply to
it; ``messages`` reads the session back from the message index (what a deletion or a forgetting
removed is not read back). Only words are kept: an ``AIMessage``'s tool calls are not, and a
message with no text (a tool call alone) is not appended. ``clear`` is refused: the log is
append-only.

:class:`EngramRetriever` asks ``/v1/recall`` and answers ``Document``s: beliefs first (the
statement as a person reads it, its quotes, the belief id), then the messages that answer (the
words, the turn's event id and ordinal, the session and the time).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.retrievers import BaseRetriever
from pydantic import SecretStr

from engram.client import AsyncEngram
from engram.integrations.turns import FORGET_INSTEAD, Conversation, Said, refused
from engram.schemas.api import RecalledBelief, RecallResults, SessionMessage
from engram.schemas.common import Role

_ROLES: dict[str, Role] = {
    "human": Role.USER,
    "user": Role.USER,
    "ai": Role.ASSISTANT,
    "assistant": Role.ASSISTANT,
    "system": Role.SYSTEM,
    "developer": Role.SYSTEM,
    "tool": Role.TOOL,
    "function": Role.TOOL,
}


def said_of(message: BaseMessage) -> Said | None:
    """The Engram message a LangChain message is; None for one without words."""
    kind = message.role if isinstance(message, ChatMessage) else message.type
    role = _ROLES.get(kind)
    if role is None:
        raise ValueError(
            f"a {kind!r} message has no speaker in Engram (roles: user, assistant, system, tool)"
        )
    text = message.text
    if not text:
        return None
    return Said(role=role, content=text, author=message.name)


def message_of(found: SessionMessage) -> BaseMessage:
    """A message read back, as the LangChain message of its role; its id is the turn's event
    id and the message's ordinal, stable across reads."""
    ident = f"{found.event_id}:{found.message_ordinal}"
    meta: dict[str, Any] = {"occurred_at": found.occurred_at.isoformat(), "project": found.project}
    match found.role:
        case Role.USER:
            return HumanMessage(found.content, id=ident, name=found.author, **meta)
        case Role.ASSISTANT:
            return AIMessage(found.content, id=ident, name=found.author, **meta)
        case Role.SYSTEM:
            return SystemMessage(found.content, id=ident, name=found.author, **meta)
        case _:
            return ToolMessage(
                found.content, id=ident, name=found.author, tool_call_id=ident, **meta
            )


class EngramChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat history kept as turns of ``session`` in ``project``, for the principal
    ``token`` names. Each append waits (up to ``wait_s``) until the message index holds it, so
    the next read shows it; ``wait_s=0`` returns once it is on the log."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str,
        project: str,
        session: str,
        wait_s: float = 30.0,
        timeout_s: float = 30.0,
    ) -> None:
        self.base_url = base_url
        self.project = project
        self.session = session
        self._token = token
        self._wait_s = wait_s
        self._timeout_s = timeout_s

    def _client(self) -> AsyncEngram:
        return AsyncEngram(self.base_url, token=self._token, timeout_s=self._timeout_s)

    def _conversation(self, engram: AsyncEngram) -> Conversation:
        return Conversation(engram, project=self.project, session=self.session, wait_s=self._wait_s)

    async def aget_messages(self) -> list[BaseMessage]:
        async with self._client() as engram:
            found = await engram.session_messages(self.session, project=self.project)
        return [message_of(m) for m in found]

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        said = [s for s in map(said_of, messages) if s is not None]
        async with self._client() as engram:
            await self._conversation(engram).append(said)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return asyncio.run(self.aget_messages())

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        asyncio.run(self.aadd_messages(messages))

    def clear(self) -> None:
        raise refused("Clearing a chat history", FORGET_INSTEAD)

    async def aclear(self) -> None:
        self.clear()


def _belief_document(hit: RecalledBelief) -> Document:
    belief = hit.belief
    quotes = [e.quote for e in belief.evidence]
    return Document(
        page_content=belief.readable,
        id=str(belief.belief_id),
        metadata={
            "kind": "belief",
            "belief_id": str(belief.belief_id),
            "quote": quotes[0] if quotes else None,
            "quotes": quotes,
            "event_id": str(belief.evidence[0].episode_id) if belief.evidence else None,
            "session": None,
            "time": belief.valid_from.isoformat(),
            "confidence": belief.effective_confidence,
            "score": hit.fused,
        },
    )


def documents_of(results: RecallResults) -> list[Document]:
    """Recall's hits as Documents, in recall's order (beliefs, then messages)."""
    documents: list[Document] = []
    for hit in results.hits:
        if isinstance(hit, RecalledBelief):
            documents.append(_belief_document(hit))
            continue
        ident = f"{hit.event_id}:{hit.message_ordinal}"
        documents.append(
            Document(
                page_content=hit.content,
                id=ident,
                metadata={
                    "kind": "message",
                    "message_id": ident,
                    "quote": hit.content,
                    "event_id": str(hit.event_id),
                    "message_ordinal": hit.message_ordinal,
                    "role": hit.role.value,
                    "project": hit.project,
                    "session": hit.session,
                    "time": hit.occurred_at.isoformat(),
                    "score": hit.fused,
                },
            )
        )
    return documents


class EngramRetriever(BaseRetriever):
    """``/v1/recall`` as a LangChain retriever: at most ``k`` Documents (``k`` may also be
    passed to ``invoke``), from ``project`` if given, the principal's own words unless
    ``roles`` names others."""

    base_url: str
    token: SecretStr
    k: int = 4
    project: str | None = None
    roles: tuple[str, ...] = ()
    timeout_s: float = 30.0

    async def _recall(self, query: str, k: int | None) -> list[Document]:
        async with AsyncEngram(
            self.base_url, token=self.token.get_secret_value(), timeout_s=self.timeout_s
        ) as engram:
            results = await engram.recall(
                query, project=self.project, roles=self.roles, limit=k or self.k
            )
        return documents_of(results)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return asyncio.run(self._recall(query, k))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        return await self._recall(query, k)
