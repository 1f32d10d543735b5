"""``--expires-in`` takes a positive number and a unit."""

from __future__ import annotations

from datetime import timedelta

import pytest
import typer

from engram.cli.tokens import parse_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [("30d", timedelta(days=30)), ("12h", timedelta(hours=12)), ("2w", timedelta(weeks=2))],
)
def test_a_number_and_a_unit_is_a_lifetime(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["0d", "30", "d", "-1d", "1y", "1.5h"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(typer.BadParameter):
        parse_duration(text)
