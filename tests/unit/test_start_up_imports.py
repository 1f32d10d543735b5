"""Every ``engram`` command starts by importing the CLI: what it loads, each process pays.

The openai client is ~1 s and ~15 MiB of RSS at start and only a model arm uses it; through the
evaluation command's imports the deterministic worker and the projector both loaded it (their
starting RSS rose by about that much). It is imported where a model is built
(``engram.streams.wiring.model_extractor_for``), and this holds the CLI to that.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "module", ["engram.cli", "engram.streams.app", "engram.projections.runner"]
)
def test_importing_a_command_does_not_load_the_model_client(module: str) -> None:
    probe = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] == 'openai'))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert loaded == "[]", f"importing {module} loaded the openai client: {loaded[:200]}"


@pytest.mark.parametrize("module", ["engram.cli", "engram.projections.runner", "engram.api"])
def test_importing_a_command_does_not_load_the_local_embedding_model(module: str) -> None:
    """``wordllama`` (~0.9 s at import) is loaded where the embedder is built, not by every
    command that could build one."""
    probe = f"import sys, {module}; print('wordllama' in sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert loaded == "False", f"importing {module} loaded wordllama"
