"""The identifier contract at the CLI's door: a tenant, principal or project named on the
command line must be one an episode could carry (``engram.schemas.common.IDENTIFIER_PATTERN``).

Without it ``engram tokens create --tenant 'a b'`` issues a token that can never reach anything,
and a control character in a name reaches PostgreSQL as a query parameter; either way the
operator learns nothing about the typo. Typer answers a ``BadParameter`` with exit 2 and the
option's name.
"""

from __future__ import annotations

import re
from typing import TypeVar

import typer

from engram.schemas.common import IDENTIFIER_PATTERN

_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
MAX_IDENTIFIER_CHARS = 200

Named = TypeVar("Named", str, list[str], None)


def _check(value: str) -> None:
    if len(value) > MAX_IDENTIFIER_CHARS or not _IDENTIFIER.fullmatch(value):
        raise typer.BadParameter(
            f"{value!r} is not an identifier: 1-{MAX_IDENTIFIER_CHARS} characters, letters, "
            "digits and . _ : @ - , starting with a letter or digit"
        )


def identifier(value: Named) -> Named:
    """Typer callback for an identifier option (one value, a repeated option, or absent)."""
    values: list[str] = [value] if isinstance(value, str) else list(value or [])
    for one in values:
        _check(one)
    return value
