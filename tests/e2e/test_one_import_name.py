"""One name per module. The card's folders (``streams/``, ``schemas/``, ...) sit at the top of the
repository and are linked into the package (``engram/streams -> ../streams``), so in a checkout
both ``engram.streams.pipeline`` and a bare ``engram.streams.pipeline`` would find the same file, and
Python would load it twice as two modules: two ``Message`` classes that refuse each other, the
resident vector cache twice. Ruff refuses the bare import in code (TID251, pyproject.toml); each
linked folder's ``__init__`` refuses it in a running process, which these tests show for every
linked module. A clone made without symbolic links fails saying how to fix it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram import LINKED
from tests.support.isolation import REPO

pytestmark = pytest.mark.e2e

# Run from the repository root, as pytest, bench/ and dev/ scripts are: the root is on sys.path,
# so every bare name is findable and only the guard stands in the way.
BOTH_WAYS = """
import importlib, json, os, sys
names = json.loads(sys.argv[1])
refused = {}
for name in names:
    importlib.import_module("engram." + name)
    try:
        importlib.import_module(name)
    except ImportError as error:
        refused[name] = str(error)
files = {}
for module in {id(m): m for m in list(sys.modules.values())}.values():  # objects, not aliases
    path = getattr(module, "__file__", None)
    if path and os.path.realpath(path).startswith(os.getcwd() + os.sep):
        files.setdefault(os.path.realpath(path), []).append(module.__name__)
twice = {path: mods for path, mods in files.items() if len(mods) > 1}
bare = sorted(m for m in sys.modules if m.split(".")[0] in json.loads(sys.argv[2]))
print(json.dumps({"refused": refused, "twice": twice, "bare": bare}))
"""


def linked_modules() -> list[str]:
    """Every module of the linked folders, by its name under the folder (``engram.streams.pipeline``)."""
    names = []
    for folder in LINKED:
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_linked_module_has_one_name_in_a_process_run_from_the_checkout() -> None:
    names = linked_modules()
    assert len(names) > 100  # the folders were found: the walk is not vacuous
    out = subprocess.run(
        [sys.executable, "-c", BOTH_WAYS, json.dumps(names), json.dumps(list(LINKED))],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    not_refused = sorted(set(names) - set(seen["refused"]))
    assert not_refused == [], f"bare imports that loaded a second copy: {not_refused[:10]}"
    for name, message in seen["refused"].items():
        assert f"import engram.{name.split('.')[0]}," in message, (name, message)
    assert seen["twice"] == {}, f"files loaded as two modules: {seen['twice']}"
    assert seen["bare"] == [], f"bare names left in sys.modules: {seen['bare']}"


def test_a_clone_without_symbolic_links_says_how_to_fix_it(tmp_path: Path) -> None:
    git = shutil.which("git")
    assert git, "git is needed to clone the repository"
    clone = tmp_path / "clone"
    subprocess.run(
        [git, "clone", "-q", "-c", "core.symlinks=false", str(REPO), str(clone)],
        check=True,
        timeout=120,
    )
    assert (clone / "engram" / "streams").is_file()  # the link checked out as a text file
    # The guard as it is in this tree, not as last committed.
    shutil.copyfile(REPO / "engram" / "__init__.py", clone / "engram" / "__init__.py")
    # -S: no site-packages, so the editable install of this checkout cannot answer instead.
    run = [sys.executable, "-S", "-m", "engram", "--help"]
    failed = subprocess.run(run, cwd=clone, capture_output=True, text=True, timeout=60)
    assert failed.returncode != 0
    assert "ModuleNotFoundError" not in failed.stderr, failed.stderr
    assert "git config core.symlinks true" in failed.stderr, failed.stderr
    assert "git checkout -- engram/streams" in failed.stderr, failed.stderr

    # The fix it names works.
    subprocess.run([git, "config", "core.symlinks", "true"], cwd=clone, check=True)
    links = [f"engram/{name}" for name in LINKED]
    subprocess.run([git, "checkout", "--", *links], cwd=clone, check=True, timeout=60)
    assert (clone / "engram" / "streams").is_symlink()
    fixed = [sys.executable, "-S", "-c", "import engram.streams, engram.schemas"]
    subprocess.run(fixed, cwd=clone, check=True, timeout=60)
