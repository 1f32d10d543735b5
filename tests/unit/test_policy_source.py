"""The formation source digest: any byte of the core's source changes it, nothing else does."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

from policies.source import formation_source_digest


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of the installed formation package, without compiled caches."""
    copy = tmp_path / "formation"
    installed = Path(str(resources.files("formation")))
    shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_copy_of_the_package_has_the_digest_of_the_installed_one(package: Path) -> None:
    assert formation_source_digest(package) == formation_source_digest()


def test_changing_one_byte_of_a_formation_source_file_changes_the_digest(package: Path) -> None:
    before = formation_source_digest(package)
    gates = package / "gates.py"
    source = bytearray(gates.read_bytes())
    source[-1] ^= 1
    gates.write_bytes(bytes(source))
    assert formation_source_digest(package) != before


def test_changing_the_deterministic_extractor_changes_the_digest(package: Path) -> None:
    before = formation_source_digest(package)
    lexicon = package / "deterministic" / "lexicon.py"
    lexicon.write_text(lexicon.read_text() + "\n# one more word\n")
    assert formation_source_digest(package) != before


def test_adding_or_renaming_a_source_file_changes_the_digest(package: Path) -> None:
    before = formation_source_digest(package)
    (package / "merge.py").rename(package / "merging.py")
    renamed = formation_source_digest(package)
    (package / "extra.py").write_text("")
    assert len({before, renamed, formation_source_digest(package)}) == 3


def test_compiled_caches_and_other_files_do_not_count(package: Path) -> None:
    before = formation_source_digest(package)
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "gates.py").write_text("not the source")
    (package / "notes.txt").write_text("scratch")
    (package / "gates.pyc").write_bytes(b"\x00")
    assert formation_source_digest(package) == before
