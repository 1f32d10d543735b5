"""LangGraph (``pip install "engram[langgraph]"``): Engram as a graph's long-term memory, in two
nodes — one that recalls before the model, one that appends the turn after it — beside the
graph's own checkpointer, which keeps the thread's short-term state.

    memory = EngramMemory(AsyncEngram(URL, token=TOKEN), project="garden")
    steps = [("recall", memory.recall), ("model", call_model), ("record", memory.record)]
    graph = StateGraph(EngramState).add_sequence(steps).add_edge(START, "recall")

Why nodes and not LangGraph's ``BaseStore``: a store is a key-value document store — ``put``
a value under a key, ``get`` the same value back, ``delete`` it, ``list_namespaces``. Engram is
not one. It forms beliefs from what a person said and mints their ids itself; it refuses what it
cannot cite (a value put may form nothing), a value comes back as a belief in its own words, not
the dict that was put, and what was said stays on the log (a delete has no meaning; a correction
or a forgetting has). A store that pretended would break the contract LangGraph's own code
relies on. The nodes are how Mem0 and Zep plug into a graph too, and they keep what Engram is
for: the turn goes in as the conversation it was, and recall answers with quotes.

The session is the graph's thread (``config["configurable"]["thread_id"]``), the principal the
token's: a graph reaches only the memory of the person its token names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import MessagesState

from engram.client import AsyncEngram
from engram.integrations.langchain import said_of
from engram.integrations.turns import Conversation
from engram.schemas.api import RecalledBelief


class EngramState(MessagesState, total=False):
    """A graph's state with what recall found for the latest question (``recalled``, one line
    per hit: a belief with its quote, or a message as said), replaced every turn."""

    recalled: list[str]


def _thread(config: RunnableConfig) -> str:
    thread = (config.get("configurable") or {}).get("thread_id")
    if not isinstance(thread, str) or not thread:
        raise ValueError(
            "Engram's memory nodes need config={'configurable': {'thread_id': ...}}: the thread "
            "is the Engram session its turns are appended to"
        )
    return thread


def _last_question(messages: Sequence[BaseMessage]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return index
    return None


class EngramMemory:
    """The two nodes, over one client (its token names the principal) and one project; ``k``
    hits are recalled, and ``record`` waits up to ``wait_s`` for the message index."""

    def __init__(
        self, engram: AsyncEngram, *, project: str, k: int = 5, wait_s: float = 30.0
    ) -> None:
        self.engram = engram
        self.project = project
        self.k = k
        self.wait_s = wait_s

    async def recall(self, state: EngramState) -> dict[str, Any]:
        """Node: recall for the latest human message; ``recalled`` holds what answers it."""
        messages = state["messages"]
        last = _last_question(messages)
        question = messages[last].text if last is not None else ""
        if not question.strip():
            return {"recalled": []}
        results = await self.engram.recall(question, project=self.project, limit=self.k)
        lines: list[str] = []
        for hit in results.hits:
            if isinstance(hit, RecalledBelief):
                quotes = "; ".join(f'"{e.quote}"' for e in hit.belief.evidence)
                lines.append(f"{hit.belief.readable} (said: {quotes})")
            else:
                lines.append(
                    f'{hit.role.value} said on {hit.occurred_at:%Y-%m-%d}: "{hit.content}"'
                )
        return {"recalled": lines}

    async def record(self, state: EngramState, config: RunnableConfig) -> dict[str, Any]:
        """Node: append the turn — the latest human message and every message after it — to
        the thread's session; the state is left as it is."""
        messages = state["messages"]
        last = _last_question(messages)
        if last is None:
            return {}
        said = [s for s in map(said_of, messages[last:]) if s is not None]
        talk = Conversation(
            self.engram, project=self.project, session=_thread(config), wait_s=self.wait_s
        )
        await talk.append(said)
        return {}
