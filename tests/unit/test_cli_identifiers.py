"""Names on the command line meet the identifier contract before anything is written or read:
a token for a tenant no episode can carry is refused with the option named, exit 2."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from engram.cli import app
from engram.cli.identifiers import identifier

runner = CliRunner()


@pytest.mark.parametrize("bad", ["a b", "a\x00b", "a\x01b", "-lead", "", "x" * 201, "caf\u00e9"])
def test_a_name_outside_the_contract_is_refused(bad: str) -> None:
    with pytest.raises(typer.BadParameter, match="not an identifier"):
        identifier(bad)
    with pytest.raises(typer.BadParameter):
        identifier(["ok", bad])


@pytest.mark.parametrize("good", ["acme", "u1", "a.b_c:d@e-f", "x" * 200, None, ["a", "b"]])
def test_a_name_inside_it_passes_unchanged(good: str | list[str] | None) -> None:
    # identifier's type variable is constrained: each branch calls it with one of its types
    if good is None:
        assert identifier(good) is None
    elif isinstance(good, str):
        assert identifier(good) == good
    else:
        assert identifier(good) == good


@pytest.mark.parametrize(
    "argv",
    [
        ["tokens", "create", "--tenant", "a b", "--principal", "u1"],
        ["tokens", "create", "--tenant", "acme", "--principal", "u\x01"],
        ["principals", "forget", "--tenant", "acme", "--principal", "no one", "--confirm"],
        ["beliefs", "list", "--tenant", "acme", "--principal", "u 1"],
        ["rederive", "--principal", "ok", "--principal", "not ok"],
    ],
)
def test_commands_refuse_before_touching_a_database(argv: list[str]) -> None:
    # No database is configured here: reaching one would fail differently (not with exit 2).
    result = runner.invoke(app, argv, env={"ENGRAM_DATABASE_URL": "postgresql://nowhere:1/x"})
    assert result.exit_code == 2, result.output
    assert "not an identifier" in result.output
