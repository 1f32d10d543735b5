"""The inspector's keys and form tokens: a secret too weak to be random stops the API, the keys
derive from the secret per purpose, and a form token is bound to its session and key."""

from __future__ import annotations

import secrets

import pytest

from engram.web.ui.access import HOME, landing
from engram.web.ui.session import MAKE_A_SECRET, UiKeys, UiSecretTooWeak, check_secret

SECRET = secrets.token_urlsafe(32)


@pytest.mark.parametrize(
    "weak", ["x", "", "a test secret of the inspector", "ab" * 40, "0123456789"[:9] * 6]
)
def test_a_short_or_repetitive_secret_is_refused_saying_how_to_make_one(weak: str) -> None:
    with pytest.raises(UiSecretTooWeak) as refused:
        UiKeys(weak)
    assert "ENGRAM_API_UI_SECRET" in str(refused.value) and MAKE_A_SECRET in str(refused.value)
    assert weak not in str(refused.value) or len(weak) < 3  # the secret is never repeated back


def test_written_out_random_secrets_are_accepted() -> None:
    for made in (secrets.token_urlsafe(32), secrets.token_hex(32), secrets.token_bytes(32).hex()):
        assert check_secret(made) == made.encode()


def test_a_form_token_is_bound_to_its_session_and_key() -> None:
    keys = UiKeys(SECRET)
    token = keys.csrf_token("session-a")
    assert keys.csrf_valid("session-a", token)
    assert not keys.csrf_valid("session-b", token)
    assert not UiKeys(secrets.token_urlsafe(32)).csrf_valid("session-a", token)
    assert not keys.csrf_valid(None, token) and not keys.csrf_valid("session-a", None)
    assert SECRET not in repr(keys)


def test_keys_are_derived_per_purpose_so_a_form_token_is_not_the_sealing_key() -> None:
    keys = UiKeys(SECRET)
    sealed = keys.seal_json(b"forget", ["t", "ana"])
    assert keys.open_json(b"forget", sealed) == ["t", "ana"]
    assert keys.open_json(b"other", sealed) is None
    assert UiKeys(secrets.token_urlsafe(32)).open_json(b"forget", sealed) is None
    assert keys.open_json(b"forget", sealed[:-2] + "AA") is None


def test_without_a_secret_each_process_has_its_own_keys() -> None:
    assert not UiKeys(None).csrf_valid("s", UiKeys(None).csrf_token("s"))


@pytest.mark.parametrize(
    "wanted",
    [
        "/ui/beliefs/5b7f2f1e-8d4a-4c53-9a51-3c4a1f0b8e21",
        "/ui/refused?cursor=abc",
        "/ui/beliefs?q=where%20do%20I%20live",
    ],
)
def test_a_page_of_the_inspector_is_where_sign_in_lands(wanted: str) -> None:
    assert landing(wanted) == wanted


@pytest.mark.parametrize(
    "wanted",
    [
        None,
        "https://evil.example/ui/beliefs",
        "//evil.example/ui/",
        "/ui//evil.example",
        "/ui/../v1/beliefs",
        "/ui/\\evil.example",
        "/ui/sign-in?next=/ui/beliefs",
        "/ui/sign-out",
        "/v1/beliefs",
        "/ui/beliefs\r\nSet-Cookie: x=1",
        "/ui/" + "a" * 3000,
    ],
)
def test_anything_else_lands_on_the_beliefs(wanted: str | None) -> None:
    assert landing(wanted) == HOME
