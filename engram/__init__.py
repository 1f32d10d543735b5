"""Engram: durable, provenance-linked memory formed from an agent's conversations.

In a checkout, the card's folders at the top of the repository (``streams/``, ``schemas/``, ...)
are linked into this package as symbolic links (``engram/streams -> ../streams``); the wheel
holds real folders. A clone made without symbolic links (``core.symlinks=false``, the default of
Git for Windows) checks each link out as a small text file naming its target, and every
``engram.streams`` import would fail with a bare ``ModuleNotFoundError``: this says what to do
instead, before anything else is imported.
"""

from pathlib import Path

LINKED = ("streams", "schemas", "ingest", "projections", "prompts", "migrations", "evaluation")

_unlinked = [name for name in LINKED if (Path(__file__).parent / name).is_file()]
if _unlinked:
    raise ImportError(
        f"engram/{', engram/'.join(_unlinked)} are plain files, not links to the folders at the "
        "top of the repository: this checkout was made without symbolic links. Turn them on "
        "(`git config core.symlinks true`; on Windows, Developer Mode or an administrator shell) "
        f"and check the links out again: `git checkout -- engram/{' engram/'.join(_unlinked)}` "
        "(docs/development.md)."
    )
