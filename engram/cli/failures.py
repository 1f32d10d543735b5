"""Engram's failures as the CLI's answers, in one place: one red line saying what was not done
and why, and the failure's exit status (``EngramFailure.exit_code``: 2 when what was asked
cannot be done as asked, 1 when it may be later), never a traceback.

A command catches a failure only to say what it did not do ("not appended", "refused");
:func:`engram.cli.main` answers any other the same way.
"""

from __future__ import annotations

from typing import NoReturn

from rich.console import Console
from rich.markup import escape

from engram.infra.errors import EngramFailure

err = Console(stderr=True)


def refuse(failure: EngramFailure, doing: str | None = None) -> NoReturn:
    """End the command: ``doing`` (e.g. "not appended") then the failure's message."""
    said = escape(str(failure))
    err.print(f"[red]{doing}:[/red] {said}" if doing else f"[red]{said}[/red]")
    raise SystemExit(failure.exit_code)
