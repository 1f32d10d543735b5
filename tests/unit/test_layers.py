"""The layers are enforced, not hoped for: an upward import fails `lint-imports` (and so CI)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = (
    "engram.cli",
    "engram.api",
    "engram.mcp_server",
    "engram.web",
    "engram.service",
    "engram.client",
    "engram.schemas",
    "engram.ingest",
    "engram.streams",
    "engram.projections",
    "engram.formation",
    "engram.resolution",
    "engram.infra",
    "engram.watermarks",
    "engram.generations",
    "engram.policies",
    "engram.keys",
    "engram.sealing",
    "engram.evaluation",
    "engram.notifications",
)
"""Everything under the one import name, one part at a time (engram.api is a module)."""
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _tree_with(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the source packages and the import contracts, with ``line`` appended to
    ``module``."""
    # The links to the card's folders (engram/streams -> ../streams, ...) are copied as folders.
    shutil.copytree(
        REPO / "engram", tmp_path / "engram", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_contract_importing_a_stage_breaks_the_layers(tmp_path: Path) -> None:
    tree = _tree_with(
        tmp_path, "engram/schemas/common.py", "import engram.projections.reads.queries  # noqa"
    )
    linted = _lint(tree)
    assert linted.returncode != 0
    assert "schemas" in linted.stdout and "BROKEN" in linted.stdout


def test_the_formation_core_reaching_for_the_database_breaks_its_contract(tmp_path: Path) -> None:
    tree = _tree_with(tmp_path, "engram/formation/gates.py", "import asyncpg  # noqa")
    linted = _lint(tree)
    assert linted.returncode != 0 and "formation" in linted.stdout


def test_the_resolution_core_reaching_for_the_database_breaks_its_contract(
    tmp_path: Path,
) -> None:
    tree = _tree_with(tmp_path, "engram/resolution/resolve.py", "import asyncpg  # noqa")
    linted = _lint(tree)
    assert linted.returncode != 0 and "resolution core does no I/O" in linted.stdout


def test_formation_importing_resolution_is_a_loop_and_breaks_the_layers(tmp_path: Path) -> None:
    tree = _tree_with(
        tmp_path, "engram/formation/gates.py", "import engram.resolution.chunk  # noqa"
    )
    assert _lint(tree).returncode != 0


def test_the_platform_importing_the_backlog_breaks_the_layers(tmp_path: Path) -> None:
    tree = _tree_with(tmp_path, "engram/infra/db.py", "import engram.watermarks.backlog  # noqa")
    assert _lint(tree).returncode != 0


def test_the_stages_do_not_import_each_other(tmp_path: Path) -> None:
    tree = _tree_with(
        tmp_path, "engram/streams/pipeline.py", "import engram.projections.reads.queries  # noqa"
    )
    assert _lint(tree).returncode != 0


def test_the_product_importing_the_evaluation_harness_breaks_the_layers(tmp_path: Path) -> None:
    """The harness is left out of the wheel: nothing that ships may import it (the CLI finds it
    by name, engram/cli/evaluation.py)."""
    tree = _tree_with(tmp_path, "engram/cli/output.py", "import engram.evaluation.corpus  # noqa")
    linted = _lint(tree)
    assert linted.returncode != 0 and "engram.evaluation" in linted.stdout


def test_the_model_arm_reaching_for_the_pipeline_breaks_its_contract(tmp_path: Path) -> None:
    tree = _tree_with(tmp_path, "engram/streams/model/arm.py", "import engram.streams.app  # noqa")
    linted = _lint(tree)
    assert linted.returncode != 0 and "model arm is a package of its own" in linted.stdout


def test_the_tree_as_committed_keeps_every_contract(tmp_path: Path) -> None:
    tree = _tree_with(tmp_path, "engram/schemas/common.py", "")
    linted = _lint(tree)
    assert linted.returncode == 0, linted.stdout


def test_a_wing_reaching_into_another_wings_module_breaks_its_contract(tmp_path: Path) -> None:
    tree = _tree_with(
        tmp_path,
        "engram/projections/reads/freshness.py",
        "import engram.projections.messages.store  # noqa",
    )
    linted = _lint(tree)
    assert linted.returncode != 0 and "messages wing's modules are its own" in linted.stdout


def test_the_messages_wing_importing_the_beliefs_wing_breaks_the_wings(tmp_path: Path) -> None:
    tree = _tree_with(
        tmp_path,
        "engram/projections/messages/store.py",
        "import engram.projections.beliefs  # noqa",
    )
    assert _lint(tree).returncode != 0


def test_the_mcp_server_and_the_http_api_are_siblings_not_layers(tmp_path: Path) -> None:
    tree = _tree_with(tmp_path, "engram/mcp_server/server.py", "import engram.api  # noqa")
    linted = _lint(tree)
    assert linted.returncode != 0 and "engram.mcp_server" in linted.stdout


def test_no_top_level_package_imports_a_package_that_imports_it() -> None:
    """Package-level loops hide a layer in the wrong place: ``engram/`` was both the top (the
    CLI, the API) and, through ``engram/shared``, the bottom, so the stages imported upward
    into the package that imported them."""
    import grimp

    graph = grimp.build_graph("engram")
    edges = {
        (importer, imported)
        for importer in PACKAGES
        for imported in PACKAGES
        if importer != imported
        and graph.direct_import_exists(importer=importer, imported=imported, as_packages=True)
    }
    assert not {(a, b) for a, b in edges if (b, a) in edges}
    assert ("engram.formation", "engram.resolution") not in edges, "resolution builds on formation"
