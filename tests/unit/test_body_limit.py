"""Bodies over the limit are refused while they arrive: declared or streamed."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from engram.web.limits import BodyLimit


def _app(limit: int) -> TestClient:
    app = FastAPI()
    app.add_middleware(BodyLimit, max_bytes=limit)

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"bytes": len(await request.body())}

    return TestClient(app)


def _chunks(count: int, size: int) -> Iterator[bytes]:
    for _ in range(count):
        yield b"x" * size


def test_a_declared_length_over_the_limit_is_413_before_the_body_is_read() -> None:
    response = _app(1024).post("/echo", content=b"x" * 2048)
    assert response.status_code == 413
    assert "ENGRAM_API_MAX_BODY_BYTES" in response.json()["detail"]


def test_a_streamed_body_is_refused_at_the_byte_that_crosses_the_limit() -> None:
    response = _app(1024).post("/echo", content=_chunks(4, 512))
    assert response.status_code == 413


def test_a_body_within_the_limit_passes_whole() -> None:
    assert _app(4096).post("/echo", content=_chunks(4, 512)).json() == {"bytes": 2048}
