"""Engram is an installable product: a wheel built from the checkout, installed into a fresh
virtual environment outside it, runs from any directory — no path into the checkout anywhere.

The fresh environment takes Engram only from the wheel; its third-party dependencies come from
the test run's own environment through a ``.pth`` line (the same packages, without fetching
them again). A ``.pth`` file in a directory that is merely on ``sys.path`` is not processed, so
the checkout's editable install stays invisible to it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import httpx
import pytest

from tests.support.conditions import wait_until
from tests.support.http import free_port
from tests.support.isolation import REPO, Isolated

pytestmark = pytest.mark.e2e

PIP_WHEEL = (sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation")
EPISODE = {
    "schema_version": 1,
    "type": "turn.appended",
    "event_id": "4b1f3c1e-5a0c-4a7b-9d6e-0d5f7f6c2a11",
    "tenant": "default",
    "principal": "ana",
    "project": "garden",
    "session": "s1",
    "occurred_at": "2026-11-01T10:00:00Z",
    "messages": [{"ordinal": 0, "role": "user", "content": "I live in Lisbon."}],
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` directory of a fresh virtual environment holding only the built wheel."""
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    # setuptools builds in the checkout's build/ and keeps what an earlier build left there (a
    # renamed migration would ship twice): the wheel is built from the tree as it is now.
    shutil.rmtree(REPO / "build", ignore_errors=True)
    subprocess.run(
        [*PIP_WHEEL, "-w", str(dist), str(REPO)],
        check=True,
        timeout=300,
        cwd=root,
    )
    [wheel] = dist.glob("engram-*.whl")
    fresh = root / "venv"
    venv.create(fresh, with_pip=True)
    python = fresh / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dependencies = sysconfig.get_paths()["purelib"]
    Path(site, "engram-test-dependencies.pth").write_text(dependencies + "\n", encoding="utf-8")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=300,
    )
    return fresh / "bin"


def _env(isolated: Isolated, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in isolated.env().items() if k != "PYTHONPATH"}
    env.update(ENGRAM_STATE_DIR=str(tmp_path / "state"), **extra)
    return env


def _run(
    bin_dir: Path, isolated: Isolated, cwd: Path, *argv: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(bin_dir / "engram"), *argv],
        cwd=cwd,
        env=_env(isolated, cwd),
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_the_installed_package_comes_from_the_wheel_not_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    found = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "import engram, engram.formation as f, engram.prompts as p, engram.migrations as m; "
            "print(engram.__file__, f.__file__, p.__file__, m.__file__)",
        ],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(REPO) not in found and "site-packages" in found


def test_the_wheel_installs_one_import_name(installed: Path) -> None:
    [top_level] = installed.parent.glob(
        "lib/python*/site-packages/engram-*.dist-info/top_level.txt"
    )
    assert top_level.read_text(encoding="utf-8").split() == ["engram"]


def test_an_application_with_its_own_schemas_and_streams_uses_the_client_and_the_commands(
    installed: Path, tmp_path: Path
) -> None:
    """An application that embeds the client very often has packages called ``schemas`` and
    ``streams`` of its own: Engram must neither shadow them nor be shadowed by them."""
    app = tmp_path / "app"
    for package in ("schemas", "streams"):
        (app / package).mkdir(parents=True)
        (app / package / "__init__.py").write_text(f'OWNER = "the application\'s {package}"\n')
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(app)}
    probe = (
        "import schemas, streams; from engram.client import AsyncEngram, Engram; "
        "from engram.schemas.episodes import TurnAppended; "
        "print(schemas.OWNER, '|', streams.OWNER, '|', AsyncEngram.__name__, Engram.__name__)"
    )
    used = subprocess.run(
        [str(installed / "python"), "-c", probe],
        cwd=app,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert used.returncode == 0, used.stderr
    assert used.stdout.split(" | ") == [
        "the application's schemas",
        "the application's streams",
        "AsyncEngram Engram\n",
    ]
    for argv in (["--help"], ["worker", "--help"]):
        helped = subprocess.run(
            [str(installed / "engram"), *argv],
            cwd=app,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert helped.returncode == 0, helped.stderr
        assert "Usage" in helped.stdout


def test_the_evaluation_harness_stays_out_of_the_wheel_and_eval_says_so(
    installed: Path, tmp_path: Path
) -> None:
    [package] = installed.parent.glob("lib/python*/site-packages/engram")
    assert (package / "cli").is_dir() and not (package / "evaluation").exists()
    ran = subprocess.run(
        [str(installed / "engram"), "eval", "formation", "--corpus", "tests/corpus"],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "evaluation harness is not installed" in ran.stderr and "checkout" in ran.stderr


def test_migrate_runs_from_another_directory(
    installed: Path, isolated: Isolated, tmp_path: Path
) -> None:
    migrated = _run(installed, isolated, tmp_path, "migrate")
    assert migrated.returncode == 0, migrated.stderr.decode()
    assert b"applied" in migrated.stdout
    again = _run(installed, isolated, tmp_path, "migrate")
    assert b"applied 0 migration(s)" in again.stdout


def test_extract_forms_from_stdin_with_the_packaged_core(
    installed: Path, isolated: Isolated, tmp_path: Path
) -> None:
    extracted = _run(
        installed, isolated, tmp_path, "extract", stdin=json.dumps(EPISODE).encode() + b"\n"
    )
    assert extracted.returncode == 0, extracted.stderr.decode()
    rows = [json.loads(line) for line in extracted.stdout.splitlines()]
    assert [(r["kind"], r["relation"], r["object"]["text"]) for r in rows] == [
        ("candidate", "lives_in", "Lisbon")
    ]


async def test_the_worker_starts_and_serves_health_from_another_directory(
    installed: Path, isolated: Isolated, tmp_path: Path
) -> None:
    port = free_port()
    env = _env(isolated, tmp_path, ENGRAM_WORKER_HTTP_PORT=str(port))
    assert _run(installed, isolated, tmp_path, "migrate").returncode == 0
    with (tmp_path / "worker.log").open("wb") as log:
        worker = subprocess.Popen(
            [str(installed / "engram"), "worker"], cwd=tmp_path, env=env, stdout=log, stderr=log
        )
        try:

            async def healthy() -> bool:
                assert worker.poll() is None, (tmp_path / "worker.log").read_text()
                try:
                    async with httpx.AsyncClient() as client:
                        answer = await client.get(f"http://127.0.0.1:{port}/health")
                except httpx.TransportError:
                    return False
                return answer.status_code == 200

            await wait_until(healthy, timeout_s=90, what="the installed worker's /health")
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
    assert (tmp_path / "state" / "faust").is_dir()
    assert not any(REPO.glob("*-data"))
