"""How every Engram consumer reads a Kafka log: committed records only.

The episodes log is written transactionally (the inbox intake appends a batch and commits its
inbox offsets in one transaction; ``engram log encrypt`` copies in transactions), and anyone
with a transactional producer may append to it. Kafka's default isolation level,
``read_uncommitted``, hands a consumer every record as soon as it is written, including those
of a transaction that is later aborted and those of one still open. A turn of an aborted
transaction would then be formed into beliefs, indexed and projected, although the writer took
it back — and ``engram log encrypt``, which copies committed records only, would re-derive
differently from the source. ``read_committed`` delivers a transaction's records only once it
commits (a consumer stops at the first open transaction's offset until then) and never those
of an aborted one; the offsets the aborted records and the transaction markers take are skipped,
so positions still move past them.

Every :class:`AIOKafkaConsumer` of Engram's is built here; faust's own consumer is told the same
in ``engram.streams.faust_private`` (faust reads committed only under ``exactly_once``).
"""

from __future__ import annotations

from typing import Any, Final

from aiokafka import AIOKafkaConsumer

READ_COMMITTED: Final = "read_committed"
"""The one isolation level of Engram's consumers (see the module's docstring for why)."""


def log_consumer(*topics: str, bootstrap: str, **options: Any) -> AIOKafkaConsumer:
    """An aiokafka consumer of ``topics`` (or none, to assign partitions) on ``bootstrap``
    that reads committed records only; ``options`` are aiokafka's other settings. Offsets are
    never committed automatically: each reader stores or commits what it has processed."""
    if "isolation_level" in options:
        raise TypeError("Engram's consumers read committed records only; pass no isolation_level")
    return AIOKafkaConsumer(
        *topics,
        bootstrap_servers=bootstrap,
        isolation_level=READ_COMMITTED,
        enable_auto_commit=options.pop("enable_auto_commit", False),
        **options,
    )
