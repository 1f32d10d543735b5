"""Talking to a subprocess's loopback HTTP endpoints."""

from __future__ import annotations

import socket

import httpx

from tests.support.conditions import wait_until


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def first_ok(url: str, deadline_s: float = 60) -> httpx.Response:
    """The first 200 answer from ``url`` (a process binds its port shortly after starting)."""
    answers: list[httpx.Response] = []

    async def answered() -> bool:
        try:
            async with httpx.AsyncClient() as client:
                answers.append(await client.get(url))
        except httpx.TransportError:
            return False
        return answers[-1].status_code == 200

    await wait_until(answered, timeout_s=deadline_s, what=f"{url} answering 200", poll_s=0.1)
    return answers[-1]
