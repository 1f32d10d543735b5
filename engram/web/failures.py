"""Engram's failures as HTTP answers, in one place: the status each kind of failure gets.

A route lets an :class:`infra.errors.EngramFailure` propagate; the handler installed here
answers ``{"detail": message}`` with the status of the nearest class in :data:`STATUS_OF` and
``Retry-After`` on a 503. A failure with no entry is the server's: 503 when
it is retriable, else 500. (Failures of the CLI, the MCP server, start-up or the stream stages
never reach a route; they get their answers in ``engram.cli.failures`` and
``engram.mcp_server.server``.)
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from engram.generations.registry import GenerationError
from engram.infra.errors import EngramFailure
from engram.ingest.producer import EpisodeTooLarge, EpisodeUnencodable
from engram.notifications.errors import (
    DestinationRefused,
    SecretsUnavailable,
    UnknownDelivery,
    UnknownEndpoint,
    UnknownNotificationType,
)
from engram.projections.reads.cursor import InvalidCursor
from engram.projections.reads.search import UnsearchableQuery
from engram.service.corrections import BeliefNotFound, InvalidCorrection
from engram.watermarks.waiting import FormationTimeout

RETRY_AFTER_S = 5

STATUS_OF: dict[type[EngramFailure], int] = {
    BeliefNotFound: 404,  # not this principal's: the same answer as not there at all
    GenerationError: 404,  # no such generation (or none serving yet)
    FormationTimeout: 408,
    EpisodeTooLarge: 413,
    EpisodeUnencodable: 422,
    InvalidCorrection: 422,
    InvalidCursor: 422,
    UnsearchableQuery: 422,
    UnknownEndpoint: 404,  # another tenant's: the same answer as none
    UnknownDelivery: 404,
    DestinationRefused: 422,  # the URL, or where its host resolves, breaks the rules
    UnknownNotificationType: 422,
    SecretsUnavailable: 503,  # this process has no KEK to wrap or read a signing secret
}
"""Every failure a route may raise, with the status a caller sees."""


def status_of(failure: EngramFailure | type[EngramFailure]) -> int:
    """The status of the nearest class of ``failure`` in :data:`STATUS_OF`; for a failure
    with none, 503 when it is retriable (the caller may try again), else 500."""
    kind = failure if isinstance(failure, type) else type(failure)
    for ancestor in kind.__mro__:
        if ancestor in STATUS_OF:
            return STATUS_OF[ancestor]
    return 503 if kind.retriable else 500


async def answer(request: Request, error: Exception) -> JSONResponse:
    """The handler FastAPI calls for an ``EngramFailure`` a route let through."""
    assert isinstance(error, EngramFailure)
    status = status_of(error)
    headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else None
    return JSONResponse({"detail": str(error)}, status_code=status, headers=headers)


def install(api: FastAPI) -> None:
    """Answer every ``EngramFailure`` a route raises by :data:`STATUS_OF`."""
    api.add_exception_handler(EngramFailure, answer)
