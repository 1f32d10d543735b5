"""The local key-encryption key passes the KEK contract, from the settings and from a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from engram.infra.settings import KeysSettings
from engram.keys.errors import KeyEncryptionKeyInvalid, KeyEncryptionKeyMissing
from engram.keys.kek import KeyEncryptionKey, LocalKek, current_kek, new_kek_text, parse_kek
from engram.keys.kek_file import create_kek_file, read_kek_file
from tests.unit.keys.kek_contract import KeyEncryptionKeyContract


class TestTheLocalKekFromTheSettingsKeepsTheContract(KeyEncryptionKeyContract):
    @pytest.fixture(autouse=True)
    def _texts(self) -> None:
        self.texts: dict[str, str] = {}

    def new_kek(self) -> KeyEncryptionKey:
        text = new_kek_text()
        kek = parse_kek(SecretStr(text), "ENGRAM_KEYS_KEK")
        self.texts[kek.key_id] = text
        return kek

    def same_kek(self, kek: KeyEncryptionKey) -> KeyEncryptionKey:
        return parse_kek(SecretStr(self.texts[kek.key_id]), "ENGRAM_KEYS_KEK")


class TestTheLocalKekFromAFileKeepsTheContract(KeyEncryptionKeyContract):
    @pytest.fixture(autouse=True)
    def _directory(self, tmp_path: Path) -> None:
        self.directory = tmp_path
        self.files: dict[str, Path] = {}

    def new_kek(self) -> KeyEncryptionKey:
        path = self.directory / f"kek-{len(self.files)}"
        assert create_kek_file(path, new_kek_text())
        kek = current_kek(KeysSettings(kek=None, kek_file=path))
        self.files[kek.key_id] = path
        return kek

    def same_kek(self, kek: KeyEncryptionKey) -> KeyEncryptionKey:
        return current_kek(KeysSettings(kek=None, kek_file=self.files[kek.key_id]))


def test_a_kek_file_is_made_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "state" / "kek"
    assert create_kek_file(path, new_kek_text())
    first = path.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not create_kek_file(path, new_kek_text())  # never replaced
    assert path.read_bytes() == first
    assert [p.name for p in path.parent.iterdir()] == ["kek"]  # no temporary file left


@pytest.mark.parametrize("mode", [0o644, 0o604, 0o620, 0o602])
def test_a_kek_file_others_can_read_or_change_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "kek"
    create_kek_file(path, new_kek_text())
    os.chmod(path, mode)
    with pytest.raises(KeyEncryptionKeyInvalid, match=f"mode {mode:04o}.*chmod 600") as raised:
        read_kek_file(path)
    assert path.read_text().strip() not in str(raised.value)


def test_a_group_readable_kek_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "kek"
    create_kek_file(path, new_kek_text())
    os.chmod(path, 0o640)
    assert isinstance(current_kek(KeysSettings(kek=None, kek_file=path)), LocalKek)


def test_the_kek_setting_wins_over_the_file_and_a_missing_file_is_named(tmp_path: Path) -> None:
    text = new_kek_text()
    missing = tmp_path / "nowhere"
    chosen = current_kek(KeysSettings(kek=SecretStr(text), kek_file=missing))
    assert chosen.key_id == parse_kek(SecretStr(text), "X").key_id
    with pytest.raises(KeyEncryptionKeyMissing, match=f"{missing}, which does not exist"):
        current_kek(KeysSettings(kek=None, kek_file=missing))
    with pytest.raises(KeyEncryptionKeyMissing, match="ENGRAM_KEYS_KEK_FILE"):
        current_kek(KeysSettings(kek=None, kek_file=None))


def test_a_kek_file_that_holds_no_kek_is_refused_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "kek"
    create_kek_file(path, "bm90IGEga2V5")  # base64, but 9 bytes
    with pytest.raises(KeyEncryptionKeyInvalid, match=f"ENGRAM_KEYS_KEK_FILE {path} decodes to 9"):
        current_kek(KeysSettings(kek=None, kek_file=path))
