"""Health on loopback for the worker and the projector: /health (the loop is alive), /ready
(assigned and not stuck) and /metrics (Prometheus). A drain that stopped moving is not healthy,
however alive the process.

Served by the same stack as the read API (Starlette under uvicorn), embedded in the process's
own event loop: the server leaves signal handling to its host (faust's worker, the projector),
and a busy port is logged instead of ending the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import Callable, Iterator
from typing import Protocol

import structlog
import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engram.infra.metrics import REGISTRY

log = structlog.get_logger(__name__)

Readiness = Callable[[], tuple[bool, str]]


def health_app(readiness: Readiness) -> Starlette:
    """The three endpoints; ``readiness`` says whether the process is ready, and why not."""

    async def health(_: Request) -> Response:
        return JSONResponse({"status": "alive"})

    async def ready(_: Request) -> Response:
        ok, why = readiness()
        return JSONResponse({"ready": ok, "reason": why}, status_code=200 if ok else 503)

    async def metrics(_: Request) -> Response:
        return Response(generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST})

    return Starlette(
        routes=[Route("/health", health), Route("/ready", ready), Route("/metrics", metrics)]
    )


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its own signal handlers: the host process decides when to stop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _bound_socket(host: str, port: int) -> socket.socket | None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        # The process goes on without the endpoints; say so loudly and how to fix it.
        log.error(
            "worker.health_unavailable",
            host=host,
            port=port,
            error=str(error),
            fix="set ENGRAM_WORKER_HTTP_PORT to a free port, or 0 to turn it off",
        )
        return None
    sock.set_inheritable(True)
    return sock


async def serve_health(readiness: Readiness, *, host: str, port: int) -> None:
    """Serve the three endpoints until cancelled."""
    sock = _bound_socket(host, port)
    if sock is None:
        return
    config = uvicorn.Config(
        health_app(readiness), log_level="warning", lifespan="off", access_log=False
    )
    server = _EmbeddedServer(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await serving
        sock.close()


class Stage(Protocol):
    """A long-running stage that can be the whole process (projector, indexer, inbox)."""

    def readiness(self) -> tuple[bool, str]: ...

    def stop(self) -> None: ...

    async def run(self) -> None: ...


async def run_stage_alone(stage: Stage, *, host: str, port: int) -> None:
    """A stage as the whole process: SIGINT or SIGTERM stop it between its own steps, and it
    serves /health, /ready and /metrics on ``host:port`` (0: none) while it runs."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stage.stop)
    health = (
        asyncio.create_task(serve_health(stage.readiness, host=host, port=port)) if port else None
    )
    try:
        await stage.run()
    finally:
        if health is not None:
            health.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await health
