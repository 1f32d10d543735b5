"""The key-encryption key in a file: the local reference implementation's storage.

The file holds the KEK's settings text (32 random bytes, base64) and nothing else. It is made
once (:func:`create_kek_file`: never overwritten, since replacing a KEK loses every word sealed
under the old one) with mode 0600, and refused on reading when other users could read it or
anyone but its owner could change it (:func:`read_kek_file`): a key-encryption key any local
user can read protects nothing. A group may read it (a secret mounted for a group of processes,
as Kubernetes does with ``fsGroup``); the world may not.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pydantic import SecretStr

from engram.keys.errors import KeyEncryptionKeyInvalid, KeyEncryptionKeyMissing

_TOO_OPEN = stat.S_IROTH | stat.S_IWOTH | stat.S_IWGRP
"""Permission bits a KEK file must not have: read by others, written by anyone but its owner."""


def read_kek_file(path: Path) -> SecretStr:
    """The KEK text the file holds. A file that is missing, not a regular file, or open to
    other users is refused by its path and mode, never by its content."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise KeyEncryptionKeyMissing(
            f"ENGRAM_KEYS_KEK_FILE names {path}, which does not exist: create it with "
            "`engram keys new-kek --file PATH` (or restore it from its backup: a new KEK cannot "
            "read what the old one wrapped)"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise KeyEncryptionKeyInvalid(f"ENGRAM_KEYS_KEK_FILE {path} is not a regular file")
    if info.st_mode & _TOO_OPEN:
        raise KeyEncryptionKeyInvalid(
            f"ENGRAM_KEYS_KEK_FILE {path} has mode {stat.S_IMODE(info.st_mode):04o}: other users "
            f"can read or change it; make it readable by its owner only (chmod 600 {path})"
        )
    try:
        return SecretStr(path.read_text(encoding="ascii").strip())
    except (OSError, UnicodeDecodeError) as error:
        raise KeyEncryptionKeyInvalid(
            f"ENGRAM_KEYS_KEK_FILE {path} cannot be read ({type(error).__name__})"
        ) from None


def create_kek_file(path: Path, text: str) -> bool:
    """Write the KEK ``text`` to ``path`` with mode 0600 unless a file is there already (it is
    never replaced); returns whether it was written. The key goes to a private temporary file
    first and is linked into place, so no reader sees a half-written or world-readable key."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(text.strip() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)  # fails if another process created it meanwhile
        except FileExistsError:
            return False
        return True
    finally:
        temporary.unlink(missing_ok=True)
