"""The local key-encryption key and the cache of unwrapped keys, pure."""

from __future__ import annotations

import base64

import pytest
from pydantic import SecretStr

from engram.infra.settings import KeysSettings
from engram.keys.cipher import new_data_key
from engram.keys.errors import (
    KeyEncryptionKeyInvalid,
    KeyEncryptionKeyMissing,
    WrongKeyEncryptionKey,
)
from engram.keys.kek import keks_from_settings, new_kek_text, parse_kek
from engram.keys.store import KeyCache, data_key_aad

SECRET = base64.b64encode(bytes(range(32))).decode()


async def test_a_data_key_wraps_and_unwraps_only_where_it_was_bound() -> None:
    kek = parse_kek(SecretStr(SECRET), "ENGRAM_KEYS_KEK")
    key = new_data_key()
    bound = data_key_aad("t", "ana", key.key_id)
    wrapped = await kek.wrap(key.material, bound)
    assert key.material not in wrapped
    assert await kek.unwrap(wrapped, bound) == key.material
    with pytest.raises(WrongKeyEncryptionKey):
        await kek.unwrap(wrapped, data_key_aad("t", "bo", key.key_id))
    other = parse_kek(SecretStr(new_kek_text()), "ENGRAM_KEYS_KEK")
    assert other.key_id != kek.key_id
    with pytest.raises(WrongKeyEncryptionKey, match=other.key_id):
        await other.unwrap(wrapped, bound)


def test_the_kek_id_is_stable_and_reveals_no_secret() -> None:
    one = parse_kek(SecretStr(SECRET), "X")
    assert one.key_id == parse_kek(SecretStr(f"  {SECRET}\n"), "X").key_id
    assert one.key_id.startswith("local-") and SECRET not in repr(one)


@pytest.mark.parametrize(
    ("value", "failure", "message"),
    [
        (None, KeyEncryptionKeyMissing, "ENGRAM_KEYS_KEK is not set"),
        ("  ", KeyEncryptionKeyMissing, "ENGRAM_KEYS_KEK is not set"),
        ("not base64!", KeyEncryptionKeyInvalid, "ENGRAM_KEYS_KEK is not base64"),
        (base64.b64encode(bytes(16)).decode(), KeyEncryptionKeyInvalid, "16 bytes"),
    ],
)
def test_a_missing_or_malformed_kek_is_refused_without_echoing_it(
    value: str | None, failure: type[Exception], message: str
) -> None:
    with pytest.raises(failure, match=message) as raised:
        parse_kek(None if value is None else SecretStr(value), "ENGRAM_KEYS_KEK")
    if value and value.strip():
        assert value not in str(raised.value)


def test_settings_give_the_current_and_previous_kek() -> None:
    current, previous = keks_from_settings(KeysSettings(kek=SecretStr(SECRET)))
    assert previous is None
    old = new_kek_text()
    current2, previous2 = keks_from_settings(
        KeysSettings(kek=SecretStr(SECRET), previous_kek=SecretStr(old))
    )
    assert current2.key_id == current.key_id and previous2 is not None
    assert SECRET not in repr(KeysSettings(kek=SecretStr(SECRET)))


def test_the_cache_is_bounded_least_recently_used_and_evicts() -> None:
    cache = KeyCache(2)
    a, b, c = new_data_key(), new_data_key(), new_data_key()
    cache.put("t", "a", a)
    cache.put("t", "b", b)
    assert cache.get("t", "a") is a  # a is now the most recently used
    cache.put("t", "c", c)
    assert len(cache) == 2 and cache.get("t", "b") is None
    assert cache.evict("t", "a") and not cache.evict("t", "a")
    assert cache.get("t", "a") is None and cache.get("t", "c") is c
    with pytest.raises(ValueError, match="at least one"):
        KeyCache(0)
