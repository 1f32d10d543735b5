"""The inspector's keys and form tokens: a secret too weak to be random stops the API, the keys
derive from the secret per purpose, and a form token is bound to its session and key."""

from __future__ import annotations

import base64
import math
import secrets

import pytest

from engram.web.ui.access import HOME, landing
from engram.web.ui.entropy import estimated_bits
from engram.web.ui.session import MAKE_A_SECRET, UiKeys, UiSecretTooWeak, check_secret

SECRET = secrets.token_urlsafe(48)


@pytest.mark.parametrize(
    "weak",
    [
        "x",
        "",
        "a test secret of the inspector",
        "ab" * 40,
        "0123456789"[:9] * 6,
        "password1234" * 4,  # 48 characters, 20 distinct: a pattern repeated
        "Password1234!" * 5,
        "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "qwertyuiopasdfghjklzxcvbnm1234567890QWERTYUIOPASDFGHJKLZXCVBNM",
        "correct horse battery staple, and then some more words to be long enough",
        "purple-monkey-dishwasher-gallant-trombone-lantern-quietly-eleven",
        "0123456789abcdef" * 4,  # 64 hex digits, but a run
        secrets.token_urlsafe(16) * 4,  # random, but repeated
    ],
)
def test_a_secret_with_less_than_256_bits_of_randomness_is_refused_saying_how_to_make_one(
    weak: str,
) -> None:
    with pytest.raises(UiSecretTooWeak) as refused:
        UiKeys(weak)
    assert "ENGRAM_API_UI_SECRET" in str(refused.value) and MAKE_A_SECRET in str(refused.value)
    assert "token_urlsafe(48)" in MAKE_A_SECRET
    assert weak not in str(refused.value) or len(weak) < 3  # the secret is never repeated back


def test_written_out_random_secrets_of_48_bytes_are_accepted() -> None:
    for _ in range(200):
        for made in (
            secrets.token_urlsafe(48),
            secrets.token_hex(48),
            secrets.token_bytes(48).hex().upper(),
            base64.b64encode(secrets.token_bytes(48)).decode(),
        ):
            assert check_secret(made) == made.encode()


def test_the_estimate_counts_the_alphabet_and_little_for_a_pattern() -> None:
    assert estimated_bits("0123456789abcdef" * 4) < 40
    assert estimated_bits("f3a9" * 16) < 40
    assert round(estimated_bits("0f" + "a3e9")) == (6 * 4)  # hex: 4 bits a digit
    assert estimated_bits("password1234" * 4) < 64
    random_letters = "kQz7"
    assert round(estimated_bits(random_letters)) == round(4 * math.log2(62))


def test_a_form_token_is_bound_to_its_session_and_key() -> None:
    keys = UiKeys(SECRET)
    token = keys.csrf_token("session-a")
    assert keys.csrf_valid("session-a", token)
    assert not keys.csrf_valid("session-b", token)
    assert not UiKeys(secrets.token_urlsafe(48)).csrf_valid("session-a", token)
    assert not keys.csrf_valid(None, token) and not keys.csrf_valid("session-a", None)
    assert SECRET not in repr(keys)


def test_keys_are_derived_per_purpose_so_a_form_token_is_not_the_sealing_key() -> None:
    keys = UiKeys(SECRET)
    sealed = keys.seal_json(b"forget", ["t", "ana"])
    assert keys.open_json(b"forget", sealed) == ["t", "ana"]
    assert keys.open_json(b"other", sealed) is None
    assert UiKeys(secrets.token_urlsafe(48)).open_json(b"forget", sealed) is None
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
