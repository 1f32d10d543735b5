"""The contract every key-encryption key passes: the local one and any KMS adapter.

Subclass :class:`KeyEncryptionKeyContract` in a module named ``test_…``, and give it
``new_kek`` (a fresh, distinct KEK each call) and ``same_kek`` (the same KEK opened again, as a
process restarting would). An adapter for a KMS that is reached over the network runs this
suite against that KMS (a Vault dev server, a KMS emulator) in an integration test; the rules
are the same (docs/privacy.md, "Writing a KMS adapter").
"""

from __future__ import annotations

import asyncio
import re
import secrets

import pytest

from engram.keys.cipher import DATA_KEY_BYTES
from engram.keys.errors import WrongKeyEncryptionKey
from engram.keys.kek import KEK_ID_PATTERN, KeyEncryptionKey
from engram.keys.store import canary_aad, data_key_aad


class KeyEncryptionKeyContract:
    """The rules; a subclass supplies the KEK."""

    def new_kek(self) -> KeyEncryptionKey:
        raise NotImplementedError

    def same_kek(self, kek: KeyEncryptionKey) -> KeyEncryptionKey:
        raise NotImplementedError

    async def test_a_wrapped_key_unwraps_to_exactly_its_bytes(self) -> None:
        kek = self.new_kek()
        material = secrets.token_bytes(DATA_KEY_BYTES)
        bound = data_key_aad("t", "ana", "k1")
        wrapped = await kek.wrap(material, bound)
        assert material not in wrapped
        assert await kek.unwrap(wrapped, bound) == material

    async def test_the_same_kek_opened_again_unwraps_what_it_wrapped(self) -> None:
        kek = self.new_kek()
        bound = canary_aad(kek.key_id)
        wrapped = await kek.wrap(b"\x00" * DATA_KEY_BYTES, bound)
        again = self.same_kek(kek)
        assert again.key_id == kek.key_id
        assert await again.unwrap(wrapped, bound) == b"\x00" * DATA_KEY_BYTES

    def test_the_key_id_is_stable_storable_and_names_one_kek(self) -> None:
        kek, other = self.new_kek(), self.new_kek()
        assert kek.key_id == kek.key_id
        assert re.fullmatch(KEK_ID_PATTERN, kek.key_id), kek.key_id
        assert other.key_id != kek.key_id

    async def test_wrapping_the_same_key_twice_gives_different_bytes(self) -> None:
        kek = self.new_kek()
        material, bound = secrets.token_bytes(DATA_KEY_BYTES), data_key_aad("t", "ana", "k1")
        assert await kek.wrap(material, bound) != await kek.wrap(material, bound)

    @pytest.mark.parametrize(
        "elsewhere",
        [("t", "bo", "k1"), ("u", "ana", "k1"), ("t", "ana", "k2"), ("t", "an", "ak1")],
    )
    async def test_a_wrapping_moved_to_other_associated_data_is_refused(
        self, elsewhere: tuple[str, str, str]
    ) -> None:
        kek = self.new_kek()
        wrapped = await kek.wrap(
            secrets.token_bytes(DATA_KEY_BYTES), data_key_aad("t", "ana", "k1")
        )
        with pytest.raises(WrongKeyEncryptionKey):
            await kek.unwrap(wrapped, data_key_aad(*elsewhere))

    async def test_altered_or_cut_bytes_are_refused_never_read_as_another_key(self) -> None:
        kek = self.new_kek()
        bound = data_key_aad("t", "ana", "k1")
        wrapped = await kek.wrap(secrets.token_bytes(DATA_KEY_BYTES), bound)
        altered = [
            *(
                wrapped[:at] + bytes([wrapped[at] ^ 0x01]) + wrapped[at + 1 :]
                for at in (0, len(wrapped) // 2, len(wrapped) - 1)
            ),
            wrapped[:-1],
            wrapped + b"\x00",
            b"",
        ]
        for bad in altered:
            with pytest.raises(WrongKeyEncryptionKey):
                await kek.unwrap(bad, bound)

    async def test_another_keks_wrapping_is_refused(self) -> None:
        kek, other = self.new_kek(), self.new_kek()
        bound = data_key_aad("t", "ana", "k1")
        wrapped = await other.wrap(secrets.token_bytes(DATA_KEY_BYTES), bound)
        with pytest.raises(WrongKeyEncryptionKey):
            await kek.unwrap(wrapped, bound)

    async def test_concurrent_wraps_and_unwraps_each_give_back_their_own_key(self) -> None:
        kek = self.new_kek()
        keys = [secrets.token_bytes(DATA_KEY_BYTES) for _ in range(32)]
        bounds = [data_key_aad("t", f"p{i}", f"k{i}") for i in range(32)]
        wrapped = await asyncio.gather(*(kek.wrap(k, b) for k, b in zip(keys, bounds, strict=True)))
        opened = await asyncio.gather(
            *(kek.unwrap(w, b) for w, b in zip(wrapped, bounds, strict=True))
        )
        assert opened == keys
