"""The field cipher, pure: round trips, associated data that binds a ciphertext to its place,
tampering refused, and malformed tokens refused with a message that says what is wrong."""

from __future__ import annotations

import base64

import pytest

from engram.keys.cipher import (
    MAX_FIELD_BYTES,
    DataKey,
    aad,
    decrypt_bytes,
    decrypt_field,
    encrypt_field,
    field_aad,
    new_data_key,
    parse,
)
from engram.keys.errors import CiphertextRejected, FieldTooLarge, MalformedCiphertext

KEY = DataKey("key-1", bytes(range(32)))
PLACE = ("tenant-a", "ana", "evt-1", "content")


def seal(text: str, key: DataKey = KEY) -> str:
    return encrypt_field(key, *PLACE, text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I moved to Lisbon in March.",
        "tabs\tnewlines\nnul\x00 bell\x07 escape\x1b[31m del\x7f",
        "accents é, CJK 東京, emoji 🙂, RTL שלום, zero-width \u200b",
        "x" * 1_000_000,
    ],
    ids=["empty", "plain", "control-characters", "unicode", "one-megabyte"],
)
def test_a_field_round_trips(text: str) -> None:
    token = seal(text)
    assert token.isascii() and "\n" not in token and '"' not in token
    assert decrypt_field(KEY, *PLACE, token) == text


def test_the_same_text_twice_gives_two_ciphertexts() -> None:
    """A random nonce per field: equal words are not visible as equal ciphertexts."""
    assert seal("same") != seal("same")


@pytest.mark.parametrize(
    "elsewhere",
    [
        ("tenant-b", "ana", "evt-1", "content"),
        ("tenant-a", "bo", "evt-1", "content"),
        ("tenant-a", "ana", "evt-2", "content"),
        ("tenant-a", "ana", "evt-1", "author"),
        ("tenant-", "aana", "evt-1", "content"),  # same concatenation, other split
    ],
    ids=["tenant", "principal", "event", "field", "boundary"],
)
def test_a_ciphertext_moved_elsewhere_is_rejected(elsewhere: tuple[str, str, str, str]) -> None:
    token = seal("Ana's words")
    with pytest.raises(CiphertextRejected, match="does not authenticate"):
        decrypt_field(KEY, *elsewhere, token)


def test_the_associated_data_is_length_prefixed() -> None:
    assert aad("a.b", "c") != aad("a", "b.c")
    assert aad("ab") == b"\x00\x00\x00\x02ab"


def test_a_fields_associated_data_is_its_six_parts_length_prefixed() -> None:
    """The format docs/privacy.md publishes, whatever the cipher caches to build it."""
    for _ in range(2):  # the second time from the cache
        assert field_aad("key-1", "tenant-a", "ana", "evt-1", "content") == aad(
            "engram.field.v1", "key-1", "tenant-a", "ana", "evt-1", "content"
        )


def test_a_tampered_ciphertext_is_rejected() -> None:
    token = seal("Ana's words")
    version, key_id, nonce, body = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    for index in (0, len(raw) - 1):  # the first byte of the words, the last of the tag
        flipped = raw.copy()
        flipped[index] ^= 0x01
        forged = base64.urlsafe_b64encode(bytes(flipped)).rstrip(b"=").decode()
        with pytest.raises(CiphertextRejected):
            decrypt_field(KEY, *PLACE, f"{version}.{key_id}.{nonce}.{forged}")
    other_nonce = base64.urlsafe_b64encode(bytes(12)).rstrip(b"=").decode()
    with pytest.raises(CiphertextRejected):
        decrypt_field(KEY, *PLACE, f"{version}.{key_id}.{other_nonce}.{body}")


def test_another_key_is_rejected_by_id_and_by_material() -> None:
    token = seal("Ana's words")
    with pytest.raises(CiphertextRejected, match="encrypted under data key 'key-1', not"):
        decrypt_field(new_data_key(), *PLACE, token)
    impostor = DataKey("key-1", bytes(32))  # same id, other material: the tag says no
    with pytest.raises(CiphertextRejected, match="does not authenticate"):
        decrypt_field(impostor, *PLACE, token)


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("I moved to Lisbon", "4 parts, not 1"),
        ("v1.key-1.abc", "4 parts, not 3"),
        ("v2.key-1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA", "version 'v2' is not supported"),
        ("v1.key 1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA", "a key id is"),
        ("v1..AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA", "a key id is"),
        ("v1.key-1.AAAA+AAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA", "nonce of an encrypted field is not"),
        ("v1.key-1.AAAA/AAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA", "nonce of an encrypted field is not"),
        ("v1.key-1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA==", "ciphertext of an encrypted field"),
        ("v1.key-1.AAAAAAAAAAAAAAAA.AAAAAAAAAA=AAAAAAAAAAA", "ciphertext of an encrypted field"),
        ("v1.key-1.AAAAAAAAAAAAAAAA.AAAAAAAAAA AAAAAAAAAAA", "ciphertext of an encrypted field"),
        ("v1.key-1.AAAAAAAAAAAAAAAA.AAAAAAAAAA\nAAAAAAAAAAA", "ciphertext of an encrypted field"),
        ("v1.key-1.AAAAAAAAAAAAAAAA.AAAAAAAAAAéAAAAAAAAAA", "ciphertext of an encrypted field"),
        ("v1.key-1.AAAA.AAAAAAAAAAAAAAAAAAAAAA", "nonce is 12 bytes, not 3"),
        ("v1.key-1.AAAAAAAAAAAAAAAA.AAAAA", "ciphertext of an encrypted field is not"),
        ("v1.key-1.AAAAAAAAAAAAAAAA.AAAA", "shorter than its 16-byte tag"),
    ],
)
def test_a_malformed_token_is_refused_clearly(token: str, message: str) -> None:
    with pytest.raises(MalformedCiphertext, match=message):
        parse(token)
    with pytest.raises(MalformedCiphertext):
        decrypt_field(KEY, *PLACE, token)


def test_a_token_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(MalformedCiphertext, match="a string, not bytes"):
        parse(b"v1.a.b.c")  # type: ignore[arg-type]


def test_the_largest_field_is_taken_and_one_byte_more_is_refused() -> None:
    at_limit = "é" * (MAX_FIELD_BYTES // 2)  # two UTF-8 bytes each: the limit counts bytes
    assert decrypt_field(KEY, *PLACE, seal(at_limit)) == at_limit
    with pytest.raises(FieldTooLarge, match=f"at most {MAX_FIELD_BYTES}"):
        seal(at_limit + "x")


def test_utf8_bytes_seal_as_their_text_does_and_open_to_the_same_bytes() -> None:
    """A serialiser's bytes go in as they are; a JSON reader gets the bytes back."""
    text = "accents é, CJK 東京, emoji 🙂"
    token = encrypt_field(KEY, *PLACE, text.encode())
    assert decrypt_field(KEY, *PLACE, token) == text
    assert decrypt_bytes(KEY, *PLACE, token) == text.encode()
    assert decrypt_bytes(KEY, *PLACE, parse(token)) == text.encode()  # parsed once, by the caller
    assert decrypt_bytes(KEY, *PLACE, seal(text)) == text.encode()


def test_a_lone_surrogate_is_refused_not_mangled() -> None:
    with pytest.raises(UnicodeEncodeError):
        seal("half a pair \ud83d")


def test_a_data_key_never_shows_its_material() -> None:
    key = new_data_key()
    assert key.material.hex() not in repr(key) and key.key_id in repr(key)
    assert "AESGCM" not in repr(key)
    assert key == DataKey(key.key_id, key.material)  # the cipher it keeps is not its identity
    with pytest.raises(ValueError, match="32 bytes, not 16"):
        DataKey("k", bytes(16))
    with pytest.raises(MalformedCiphertext, match="a key id is"):
        DataKey("k.1", bytes(32))
