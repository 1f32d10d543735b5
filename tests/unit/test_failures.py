"""One error root: every failure Engram raises on purpose is an ``EngramFailure`` with its own
code, a retriable flag and an exit status, and each surface maps it in one place."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from engram.cli.failures import refuse
from engram.generations.registry import GenerationError, PolicyChanged
from engram.infra.errors import EngramFailure
from engram.ingest.producer import EpisodeTooLarge, EpisodeUnencodable
from engram.mcp_server.server import _refusing
from engram.projections.reads.cursor import InvalidCursor
from engram.projections.reads.search import UnsearchableQuery
from engram.service.corrections import BeliefNotFound, InvalidCorrection
from engram.streams.model.extractor import ModelExtractionError
from engram.streams.publishing import RecordRejected
from engram.watermarks.waiting import FormationTimeout
from engram.web.failures import STATUS_OF, status_of

SERVER_PACKAGES = ("engram",)
"""Everything Engram ships, under its one import name: a failure defined anywhere is found."""


def _every_failure() -> list[type[EngramFailure]]:
    """Every subclass of the root, once every server module is imported (a class defined in a
    module nobody imported yet would otherwise be missed)."""
    for name in SERVER_PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    found: list[type[EngramFailure]] = []
    pending = list(EngramFailure.__subclasses__())
    while pending:
        kind = pending.pop()
        found.append(kind)
        pending.extend(kind.__subclasses__())
    return [kind for kind in found if kind.__module__.split(".")[0] in SERVER_PACKAGES]


def test_every_failure_has_a_code_of_its_own() -> None:
    failures = _every_failure()
    assert len(failures) >= 29, "the 29 failure classes of issue 29, and any added since"
    codes = [kind.code for kind in failures]
    assert "engram_failure" not in codes, "each class names its own code"
    assert len(set(codes)) == len(codes), sorted(codes)
    for kind in failures:
        assert isinstance(kind.retriable, bool)
        assert kind.exit_code in (1, 2)
        if kind.retriable:
            assert kind.exit_code == 1, f"{kind.__name__} may succeed later: exit 1, not 2"


def test_every_failure_has_an_http_status() -> None:
    """The table and its fallback answer every failure: a refusal the route raises keeps the
    status it had before the table (the API contract), the rest are the server's."""
    statuses = {kind: status_of(kind) for kind in _every_failure()}
    assert set(statuses.values()) <= {404, 408, 413, 422, 500, 503}
    assert set(STATUS_OF) <= set(statuses), "the table names only failures"
    for kind, status in statuses.items():
        if not any(issubclass(kind, mapped) for mapped in STATUS_OF):
            assert status == (503 if kind.retriable else 500), kind


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        (BeliefNotFound, 404),
        (GenerationError, 404),
        (PolicyChanged, 404),
        (FormationTimeout, 408),
        (EpisodeTooLarge, 413),
        (EpisodeUnencodable, 422),
        (InvalidCorrection, 422),
        (InvalidCursor, 422),
        (UnsearchableQuery, 422),
    ],
)
def test_the_statuses_routes_answered_before_the_table(
    kind: type[EngramFailure], status: int
) -> None:
    assert status_of(kind) == status


def test_outages_are_retriable_and_refusals_are_not() -> None:
    assert ModelExtractionError.retriable and FormationTimeout.retriable
    assert not RecordRejected.retriable and not GenerationError.retriable


def test_http_maps_the_nearest_class_and_the_rest_are_the_servers() -> None:
    assert all(issubclass(kind, EngramFailure) for kind in STATUS_OF)
    assert status_of(PolicyChanged("changed")) == STATUS_OF[GenerationError] == 404
    assert status_of(ModelExtractionError("timeout", "slow")) == 503
    assert status_of(RecordRejected(ValueError("too big"))) == 500


async def test_a_tool_error_says_why_and_whether_to_retry() -> None:
    async def refused() -> None:
        raise GenerationError("no generation g7")

    async def timed_out() -> None:
        raise FormationTimeout("not formed through 9 in 1s")

    with pytest.raises(ToolError, match=r"^no generation g7$"):
        await _refusing(refused())
    with pytest.raises(ToolError, match=r"in 1s; retry shortly$"):
        await _refusing(timed_out())


@pytest.mark.parametrize(
    ("failure", "status"), [(GenerationError("x"), 2), (FormationTimeout("y"), 1)]
)
def test_the_cli_ends_with_the_failures_exit_status(failure: EngramFailure, status: int) -> None:
    with pytest.raises(SystemExit) as ended:
        refuse(failure, "refused")
    assert ended.value.code == status
