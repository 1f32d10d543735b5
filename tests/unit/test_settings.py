"""Every setting is documented, and secrets stay secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.infra.settings import SECTIONS, DatabaseSettings

CONFIGURATION = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def _variables() -> list[str]:
    names = []
    for section in SECTIONS:
        prefix = section.model_config.get("env_prefix", "")
        names += [f"{prefix}{field.upper()}" for field in section.model_fields]
    return names


@pytest.mark.parametrize("variable", _variables())
def test_every_setting_is_documented_in_the_configuration_page(variable: str) -> None:
    assert f"`{variable}`" in CONFIGURATION.read_text(encoding="utf-8")


def test_the_database_url_never_renders_its_password() -> None:
    settings = DatabaseSettings(url="postgresql://u:hunter2@h/db")
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings.model_dump())
