"""The digest of the formation core's source: the part of the policy version that follows code.

The deterministic extractor, admission, the gates and the rest of what decides live in the
``formation`` package, so one digest over its source files stands for their versions; editing
any of them changes the policy version without anyone bumping a constant. The core reads no
files, so the digest is computed here, at the edge, and passed into the policy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable

SOURCE_SUFFIX = ".py"
SKIPPED_FOLDERS = frozenset({"__pycache__"})


def formation_source_digest(root: Traversable | None = None) -> str:
    """SHA-256 over every ``.py`` file under ``root`` (the installed ``formation`` package).

    Files are taken in the order of their relative paths, and each contributes its path, its
    length and its bytes, so the digest does not depend on the file system's listing order or
    the install location, and moving bytes between two files still changes it. Any byte
    counts, comments included: telling a harmless edit from one that changes what forms is
    what a re-derivation's diff is for.
    """
    folder = root if root is not None else resources.files("formation")
    digest = hashlib.sha256()
    for relative, data in sorted(_source_files(folder, "")):
        digest.update(f"{relative}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _source_files(folder: Traversable, prefix: str) -> Iterator[tuple[str, bytes]]:
    for entry in folder.iterdir():
        relative = prefix + entry.name
        if entry.is_dir():
            if entry.name not in SKIPPED_FOLDERS:
                yield from _source_files(entry, relative + "/")
        elif entry.name.endswith(SOURCE_SUFFIX):
            yield relative, entry.read_bytes()
