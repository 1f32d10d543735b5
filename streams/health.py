"""Health on loopback for the worker and the projector: /health (the loop is alive), /ready
(assigned and not stuck) and /metrics (Prometheus). A drain that stopped moving is not healthy,
however alive the process."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from streams.metrics import REGISTRY

log = structlog.get_logger(__name__)

if TYPE_CHECKING:
    from streams.app import EngramStreams


def worker_readiness(streams: EngramStreams, *, stall_after_s: float) -> tuple[bool, str]:
    pipeline = streams.pipeline
    if pipeline is None:
        return False, "formation pipeline not started"
    if not streams.app.consumer.assignment():
        return False, "no partitions assigned"
    oldest = pipeline.oldest_in_flight_s()
    if oldest > stall_after_s:
        return False, f"oldest in-flight episode has waited {oldest:.0f}s (> {stall_after_s:.0f}s)"
    return True, "ready"


async def serve_health(readiness: Callable[[], tuple[bool, str]], *, host: str, port: int) -> None:
    """Serve the three endpoints until cancelled; ``readiness`` says whether, and why not."""

    async def health(_: web.Request) -> web.Response:
        return web.json_response({"status": "alive"})

    async def ready(_: web.Request) -> web.Response:
        ok, why = readiness()
        return web.json_response({"ready": ok, "reason": why}, status=200 if ok else 503)

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/ready", ready)
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as error:
        # Formation goes on without the endpoints; say so loudly and how to fix it.
        log.error(
            "worker.health_unavailable",
            host=host,
            port=port,
            error=str(error),
            fix="set ENGRAM_WORKER_HTTP_PORT to a free port, or 0 to turn it off",
        )
        await runner.cleanup()
        return
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
