"""Compile the formation core with mypyc in place, or remove what that left: a measuring probe.

Issue 13 asked whether compiling the pure ``formation`` package pays (docs/benchmarks.md,
"Compiling the formation core with mypyc"). It paid about 1.45x on the bench corpus, short of
the 1.5x bar set for building it into the install, so this stays a probe: it is not how the
project is built, and nothing installs or imports it.

    PYTHONPATH=$PWD .venv/bin/python dev/mypyc_probe.py build   # ~40 s on 2 cores
    PYTHONPATH=$PWD .venv/bin/python dev/mypyc_probe.py clean   # back to pure Python

``build`` leaves ``engram/formation/**/*.so`` and one ``*__mypyc*.so`` at the root, which Python
imports in preference to the ``.py`` beside them: run ``clean`` before editing formation code,
or the edit has no effect. Modules left out, and why:

- ``engram/formation/__init__.py``: import-linter (grimp) accepts a top-level package only when its
  origin is an ``__init__.py``; compiled, every contract check fails.
- ``engram/formation/policy.py``: ``FormationPolicy.version`` is a ``cached_property``, which does not
  cache on a compiled (native) dataclass; the version is recomputed (``asdict``, JSON, SHA-256)
  for every candidate and the core runs twice as slow as uncompiled.
- ``engram/resolution/undo.py``: ``BatchUndo.to_json`` hands the dataclass to ``orjson.dumps``, which
  crashes the process (segmentation fault) on a compiled dataclass.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mypyc.build import mypycify
from setuptools import setup  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parent.parent
LEFT_OUT = frozenset(
    {"engram/formation/__init__.py", "engram/formation/policy.py", "engram/resolution/undo.py"}
)


def compiled_sources() -> list[str]:
    """Every formation module but those left out, as paths relative to the repository."""
    paths = sorted(
        p.relative_to(REPO).as_posix() for p in (REPO / "engram" / "formation").rglob("*.py")
    )
    return [path for path in paths if path not in LEFT_OUT]


def build() -> None:
    """Type-check and compile the modules with mypyc, and put the extensions beside them."""
    os.chdir(REPO)  # mypycify takes paths relative to the working directory
    setup(
        name="formation-mypyc-probe",
        ext_modules=mypycify(compiled_sources(), opt_level="3"),
        script_args=["build_ext", "--inplace"],
    )


def clean() -> None:
    """Remove every extension ``build`` put in the tree, so the ``.py`` files are imported."""
    for path in [*(REPO / "engram" / "formation").rglob("*.so"), *REPO.glob("*__mypyc*.so")]:
        path.unlink()


def main(argv: list[str]) -> int:
    commands = {"build": build, "clean": clean}
    if len(argv) != 1 or argv[0] not in commands:
        print("usage: dev/mypyc_probe.py build|clean", file=sys.stderr)
        return 2
    commands[argv[0]]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
