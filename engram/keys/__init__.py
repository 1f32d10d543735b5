"""Per-principal data keys and the field cipher: the foundation of erasure that reaches the log
(issue 26, docs/privacy.md "Per-principal keys").

Every principal gets one random data key, kept in PostgreSQL only wrapped by a key-encryption key
(KEK) from the settings or, later, a KMS (``kek.KeyEncryptionKey``). A person's words are to be
encrypted field by field with that data key (``cipher``: AES-GCM, bound to tenant, principal,
event id and field name), so destroying the one key (``store.KeyStore.destroy``) makes every copy
of those words unreadable: on the topics, on the brokers' disks and in every backup.

``cipher`` is pure (bytes and strings in and out); ``kek`` turns the settings into a KEK;
``store`` keeps the keys (migration 0024) with a bounded cache; ``rotation`` re-wraps them under a
new KEK. Nothing calls this package yet: the doors, the topics and forgetting are to.
"""
