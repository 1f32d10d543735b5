"""The inspector's session cookie and form tokens: sealed, unforgeable, bounded in age, and
never showing the token they carry."""

from __future__ import annotations

from engram.web.ui.session import Session, UiKeys

TOKEN = "engram_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"


def _session(issued_at: int = 1_000_000) -> Session:
    return Session(TOKEN, "t", "ana", issued_at)


def test_a_sealed_session_opens_to_itself_and_shows_no_token() -> None:
    keys = UiKeys("secret")
    cookie = keys.seal(_session())
    assert TOKEN not in cookie and "ana" not in cookie
    assert keys.open(cookie, max_age_s=60, now=1_000_030) == _session()
    assert TOKEN not in repr(_session())


def test_an_altered_or_foreign_cookie_opens_to_nothing() -> None:
    keys = UiKeys("secret")
    cookie = keys.seal(_session())
    altered = cookie[:-2] + ("A" if cookie[-2] != "A" else "B") + cookie[-1]
    assert keys.open(altered, max_age_s=60, now=1_000_030) is None
    assert UiKeys("another secret").open(cookie, max_age_s=60, now=1_000_030) is None
    assert keys.open("not base64 at all!", max_age_s=60) is None
    assert keys.open(None, max_age_s=60) is None


def test_an_old_session_is_refused() -> None:
    keys = UiKeys("secret")
    cookie = keys.seal(_session())
    assert keys.open(cookie, max_age_s=60, now=1_000_061) is None


def test_without_a_secret_each_process_has_its_own_keys() -> None:
    cookie = UiKeys(None).seal(_session())
    assert UiKeys(None).open(cookie, max_age_s=60, now=1_000_001) is None


def test_a_form_token_is_bound_to_its_session_and_key() -> None:
    keys = UiKeys("secret")
    token = keys.csrf_token("cookie-a")
    assert keys.csrf_valid("cookie-a", token)
    assert not keys.csrf_valid("cookie-b", token)
    assert not UiKeys("other").csrf_valid("cookie-a", token)
    assert not keys.csrf_valid(None, token) and not keys.csrf_valid("cookie-a", None)
