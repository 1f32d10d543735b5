"""Where forgotten words could still be: every record of a test's topics, read raw, and the
test's database as ``pg_dump`` writes it."""

from __future__ import annotations

import shutil
import subprocess

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient


async def every_record(bootstrap: str, prefix: str) -> dict[str, list[bytes]]:
    """Every record (key, value and headers) of every topic of this test, read raw."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        names = sorted(n for n in await admin.list_topics() if n.startswith(prefix))
        described = await admin.describe_topics(names)
    finally:
        await admin.close()
    partitions = [
        TopicPartition(topic["topic"], p["partition"])
        for topic in described
        for p in topic["partitions"]
    ]
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level="read_uncommitted"
    )
    await consumer.start()
    try:
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        records: dict[str, list[bytes]] = {name: [] for name in names}
        while [tp for tp in partitions if await consumer.position(tp) < ends[tp]]:
            for tp, batch in (await consumer.getmany(timeout_ms=500)).items():
                for r in batch:
                    parts = [r.key or b"", r.value or b""] + [v for _, v in r.headers]
                    records[tp.topic].append(b"\x00".join(parts))
        return records
    finally:
        await consumer.stop()


def pg_dump_text(database_url: str) -> str:
    pg_dump = shutil.which("pg_dump")
    assert pg_dump is not None, "pg_dump is in Debian's postgresql-client, which dev/ installs"
    return subprocess.run(
        [pg_dump, "--data-only", database_url], check=True, capture_output=True, text=True
    ).stdout.lower()
