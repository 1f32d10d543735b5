"""The MCP server: four tools over :class:`~engram.mcp_server.memory.AgentMemory`, served over
stdio (one principal, the token given at start) or streamable HTTP (each request's own token).

Every tool call resolves its token again (:mod:`engram.mcp_server.access`), so a revoked or
expired token stops working at once, as it does for the HTTP API. A refusal — no token, a
query with nothing to search, a belief that is not this principal's, a correction that cannot
apply, Kafka out of reach — comes back as a tool error whose text says what to do; nothing is
appended in any of these.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar

import uvicorn
from aiokafka.errors import KafkaError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel, ConfigDict, Field

from engram.infra.errors import EngramFailure
from engram.infra.settings import Settings
from engram.mcp_server.access import BearerGate, TokenOf, header_token, principal_of
from engram.mcp_server.memory import AgentMemory, Deletion, Principal, Recall, agent_memory
from engram.projections.reads.recall import MAX_LIMIT, MAX_QUERY_CHARS, OWN_WORDS
from engram.schemas.api import LogPosition
from engram.schemas.common import IDENTIFIER_PATTERN, Role, StoredText
from engram.schemas.corrections import CorrectionKind
from engram.schemas.episodes import MAX_MESSAGE_CHARS

INSTRUCTIONS = (
    "Engram is this person's long-term memory. Before answering from assumptions about them, "
    "`recall` what is believed, and cite the quotes it returns. When they ask you to remember "
    "something, `remember` it in their own words. When they say a belief is wrong, `correct` it "
    "by its belief_id; when they ask for it to be gone, `delete` it and tell them what its "
    "receipt says. Changes apply once formed (seconds); they are never instant."
)
DELETE_WAIT_S = 20.0
"""How long the delete tool waits for the receipt before answering with the position alone."""
HTTP_PATH = "/mcp"
T = TypeVar("T")

ProjectName = Annotated[
    str, Field(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN, description="A project.")
]


async def _checked(memory: AgentMemory, token_of: TokenOf, ctx: Context) -> Principal:
    return await _refusing(principal_of(memory.pool, token_of(ctx)))


def build_server(memory: AgentMemory, token_of: TokenOf) -> MCPServer:
    """An MCP server whose tools act for the principal of the token ``token_of`` finds."""

    async def recall(
        query: Annotated[
            StoredText,
            Field(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                description="What to look for: a question in plain words.",
            ),
        ],
        ctx: Context,
        project: Annotated[
            ProjectName | None, Field(description="Only what applies in this project.")
        ] = None,
        roles: Annotated[
            list[Role] | None,
            Field(
                max_length=len(Role),
                description="Whose messages: default only the person's own (user); add "
                "assistant, tool or system to hear those too (each message says its role).",
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most hits.")] = 10,
        cursor: Annotated[
            str | None,
            Field(min_length=1, max_length=200, description="A previous answer's next_cursor."),
        ] = None,
        semantic: Annotated[
            bool,
            Field(description="Also match by meaning (default); false: by words only."),
        ] = True,
        asked_at: Annotated[
            datetime | None,
            Field(
                description="When the question is asked, RFC 3339 (default now): 'last week' "
                "or 'two months ago' in it is read from this date."
            ),
        ] = None,
    ) -> Recall:
        """Recall what answers a question about this person: what is believed, best first, each
        belief with the exact words it came from (quotes with their episode and byte span) to
        cite; then the messages that answer, as said, with their event id and ordinal."""
        who = await _checked(memory, token_of, ctx)
        return await _refusing(
            memory.recall(
                who,
                query,
                project=project,
                roles=roles or OWN_WORDS,
                limit=limit,
                cursor=cursor,
                semantic=semantic,
                asked_at=asked_at,
            )
        )

    async def remember(
        text: Annotated[
            StoredText,
            Field(
                min_length=1,
                max_length=MAX_MESSAGE_CHARS,
                description="The person's own words, e.g. 'I moved to Porto in May.'",
            ),
        ],
        project: ProjectName,
        ctx: Context,
    ) -> LogPosition:
        """Explicit memory: append what the person asked to be remembered, in their words. It
        passes the same checks as anything they say, and forms within seconds."""
        who = await _checked(memory, token_of, ctx)
        return await _refusing(memory.remember(who, text, project=project))

    async def correct(
        belief_id: Annotated[uuid.UUID, Field(description="From recall.")],
        kind: Annotated[
            CorrectionKind,
            Field(
                description="untrue: it never held; changed: it no longer holds (give the "
                "replacement); not_here: not in this project; unspecified: doubtful."
            ),
        ],
        ctx: Context,
        replacement: Annotated[
            StoredText | None,
            Field(min_length=1, max_length=4096, description="The new value, for 'changed'."),
        ] = None,
        project: Annotated[
            ProjectName | None,
            Field(description="Where it does not apply (not_here); default: where it was learned."),
        ] = None,
    ) -> LogPosition:
        """Correct a belief the person says is wrong. The correction is evidence: it survives
        re-derivation and stops the same claim forming again."""
        who = await _checked(memory, token_of, ctx)
        return await _refusing(
            memory.correct(who, belief_id, kind, replacement=replacement, project=project)
        )

    async def delete(
        belief_id: Annotated[uuid.UUID, Field(description="From recall.")], ctx: Context
    ) -> Deletion:
        """Delete a belief the person wants gone: its words leave every projection and a hash
        keeps it from forming again. Answers with the receipt once applied: what went, and
        where the words still are (the episodic log keeps the turn that said it, sealed or in
        clear) — tell the person that, never that nothing remains."""
        who = await _checked(memory, token_of, ctx)
        return await _refusing(memory.delete(who, belief_id, wait_s=DELETE_WAIT_S))

    return MCPServer(
        "engram",
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        tools=[strict_tool(tool) for tool in (recall, remember, correct, delete)],
    )


def strict_tool(fn: Callable[..., Any]) -> Tool:
    """The tool of ``fn``, refusing an argument it does not take (as every HTTP door refuses a
    field the contract does not have): the SDK's argument model ignores unknown keys, so a
    misspelt ``projet`` would be dropped and the correction applied where it was learned. Its
    published ``inputSchema`` says ``additionalProperties: false``."""
    tool = Tool.from_function(fn)
    loose = tool.fn_metadata.arg_model
    strict: type[BaseModel] = type(
        loose.__name__,
        (loose,),
        {
            "model_config": ConfigDict(arbitrary_types_allowed=True, extra="forbid"),
            "__module__": loose.__module__,
        },
    )
    metadata = tool.fn_metadata.model_copy(update={"arg_model": strict})
    return tool.model_copy(
        update={"fn_metadata": metadata, "parameters": strict.model_json_schema(by_alias=True)}
    )


async def _refusing(call: Awaitable[T]) -> T:
    """The call's answer; Engram's failures as tool errors that say what to do (the one place
    the MCP tools map them: a retriable one says to retry)."""
    try:
        return await call
    except EngramFailure as failure:
        retry = "; retry shortly" if failure.retriable else ""
        raise ToolError(f"{failure}{retry}") from None
    except KafkaError as error:
        raise ToolError(
            f"the episodic log is unreachable ({type(error).__name__}); nothing was appended; "
            "retry shortly"
        ) from None


async def serve_stdio(settings: Settings, token: str | None) -> None:
    """Serve on stdin/stdout for the principal of ``token``; :class:`Refused` at once without a
    usable one (an MCP client shows the server's exit and its stderr)."""
    async with agent_memory(settings) as memory:
        await principal_of(memory.pool, token)
        await build_server(memory, lambda _ctx: token).run_stdio_async()


async def serve_http(settings: Settings, *, host: str, port: int) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp``; every request needs a principal's
    bearer token."""
    async with agent_memory(settings) as memory:
        server = build_server(memory, header_token)
        app = BearerGate(
            server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host), memory.pool
        )
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        await uvicorn.Server(config).serve()
