"""The root of every failure Engram's server code raises on purpose.

Each failure says two things its callers need without knowing its class: a stable ``code``
(for logs, metrics and the answers of the HTTP API, the CLI and the MCP tools) and whether it is
``retriable`` — whether the same call may succeed later (an outage, a timeout) or will fail the
same way until something changes (bad input, a refused policy, a bug in a pure core). The
formation retry loop (:mod:`engram.streams.retrying`) parks an episode at once on a failure that is not
retriable; the surfaces map failures to answers in one place each: ``engram.web.failures``
(HTTP status), ``engram.cli.failures`` (message and exit status) and
``engram.mcp_server.server._refusing`` (a tool error).

Every subclass also keeps the built-in class it had (``ValueError``, ``LookupError`` …), so code
and tests that catch those still do. The pure cores (``formation``, ``resolution``,
``schemas``) sit below this layer and raise no failure of their own that crosses it:
:class:`engram.streams.formation_stage.CoreFailure` wraps what escapes them.
"""

from __future__ import annotations

from typing import ClassVar


class EngramFailure(Exception):
    """A failure Engram raises on purpose; see the module docstring."""

    code: ClassVar[str] = "engram_failure"
    retriable: ClassVar[bool] = False
    exit_code: ClassVar[int] = 2
    """The CLI's exit status when this failure ends a command (2: what was asked cannot be done
    as asked; 1: it was done as far as it could be, or may be later)."""
