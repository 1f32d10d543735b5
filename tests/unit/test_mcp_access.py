"""Reading the bearer token of an MCP request: only the Bearer scheme, never a guess."""

from __future__ import annotations

import pytest

from engram.mcp_server.access import bearer


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer engram_abc", "engram_abc"),
        ("bearer engram_abc", "engram_abc"),
        ("Bearer   engram_abc  ", "engram_abc"),
        ("Basic dXNlcjpwdw==", None),
        ("engram_abc", None),
        ("Bearer", None),
        ("Bearer ", None),
        ("", None),
        (None, None),
    ],
)
def test_only_a_bearer_header_yields_a_token(header: str | None, token: str | None) -> None:
    assert bearer(header) == token
