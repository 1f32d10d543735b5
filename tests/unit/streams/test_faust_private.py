"""faust's private API, as Engram uses it, on the locked faust: every attribute
:mod:`engram.streams.faust_private` relies on is where it was, on real faust objects (built, never
started: no broker is contacted), and no other module of the repository reaches for one."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import faust
import pytest
from faust.transport.consumer import Fetcher

from engram.infra.log_reading import READ_COMMITTED
from engram.streams.faust_private import PRIVATE, close_unstarted, worker_consumer
from engram.streams.transport import EngramApp
from tests.support.isolation import REPO

ADAPTER = "streams/faust_private.py"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[faust.App]:
    app = EngramApp("unit-faust-private", broker="kafka://127.0.0.1:1", datadir=str(tmp_path))
    yield app
    close_unstarted(app)


def moved(app: faust.App, private: dict[str, str]) -> list[str]:
    """The entries of ``private`` that faust's objects (of ``app``) no longer have."""
    owners = {
        "Conductor": app.topics,
        "Consumer": app.consumer,
        "Service": Fetcher(app=app),  # a mode Service, as faust's consumer is
        "Producer": app.producer,
        "ConsumerThread": cast(Any, app.consumer)._thread,
    }
    return [
        f"{name} ({why})"
        for name, why in private.items()
        for owner, attribute in [name.split(".")]
        if not hasattr(owners[owner], attribute)
    ]


def test_every_private_attribute_engram_uses_is_on_the_locked_faust(app: faust.App) -> None:
    missing = moved(app, PRIVATE)
    assert not missing, (
        f"faust {faust.__version__} moved what engram/streams/faust_private.py uses: "
        f"{'; '.join(missing)}. Find where it went in the new faust, change that module (and "
        "only it), and compare streams/transport.py's copy of the drain loop again."
    )
    assert hasattr(app.consumer, "_stopped")  # the consumer is a Service too


def test_the_check_names_an_attribute_faust_does_not_have(app: faust.App) -> None:
    gone = {**PRIVATE, "Conductor._tp_index_v2": "a name faust never had"}
    assert moved(app, gone) == ["Conductor._tp_index_v2 (a name faust never had)"]


def test_no_other_module_uses_fausts_private_attributes() -> None:
    attributes = sorted({name.split(".")[1] for name in PRIVATE})
    uses = re.compile(r"\.(" + "|".join(attributes) + r")\b")
    named = re.compile(r"``[\w.]*\.(" + "|".join(attributes) + r")``")  # prose naming it
    files = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.split()
    here = Path(__file__).relative_to(REPO).as_posix()
    elsewhere = [
        f"{path}:{number}"
        for path in files
        if path not in (ADAPTER, here) and (REPO / path).is_file()
        for number, line in enumerate((REPO / path).read_text().splitlines(), 1)
        if uses.search(named.sub("", line))
    ]
    assert elsewhere == [], f"faust's private API used outside {ADAPTER}: {elsewhere}"


async def test_formations_kafka_consumer_reads_committed_records_only(tmp_path: Path) -> None:
    """faust itself reads ``read_committed`` only under ``exactly_once``; this app does always
    (an aborted transaction's turn must never form). Built, never started."""
    app = EngramApp("unit-read-committed", broker="kafka://127.0.0.1:1", datadir=str(tmp_path))
    built = worker_consumer(app.consumer, app.transport)
    try:
        assert built._isolation_level == READ_COMMITTED
    finally:
        await built.stop()
        close_unstarted(app)
