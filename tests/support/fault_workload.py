"""The workload of the fault suite and the soak: many principals, each with two projects,
talking about where they live, work and what they prefer — facts that change over time
(supersession), repeat (reinforcement) and recur in both projects (promotion to user scope).

By default each principal keeps both projects on one partition of ``engram.episodes``, so its
claims batches reach the projector in event-time order and nothing rewinds: the cheap workload
the 20k suite runs. With ``spanning=True`` the two projects sit on different partitions: two
formation lanes race, a restart replays one partition and not the other, and the projector sees
a principal's batches out of event-time order and rewinds (docs/architecture.md "Ordering") —
the digest must still be the uninterrupted run's.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from aiokafka.partitioner import murmur2

from engram.schemas.common import episode_key
from engram.schemas.episodes import Message, TurnAppended

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
CITIES = ("Lisbon", "Porto", "Berlin", "Cork", "Oslo", "Turin", "Riga", "Quito")
ORGS = ("Acme Robotics", "Globex", "Initech", "Umbrella Labs", "Hooli")
PREFERENCES = ("concise answers", "dark mode", "bullet points", "morning meetings")
TEMPLATES = (
    "I live in {city}.",
    "I work at {org}. I prefer {pref}.",
    "Could you summarise the meeting notes from yesterday for me?",
    "My sister {sibling} lives in {city}. I speak Portuguese and English.",
    "I moved to {city}. We decided to deploy on Fridays.",
    "I have a bike and a car. The build failed again; can you look at the logs?",
)
SIBLINGS = ("Marta", "Rui", "Ines", "Tomas")


def partition_of(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives ``key`` (murmur2, as the producer)."""
    hashed: int = murmur2(key)  # aiokafka ships no types
    return (hashed & 0x7FFFFFFF) % partitions


def projects_on_one_partition(tenant: str, principal: str, partitions: int) -> tuple[str, str]:
    """Two project names of ``principal`` whose episodes land on the same partition."""
    first = f"{principal}-home"
    wanted = partition_of(episode_key(tenant, first), partitions)
    for n in range(1000):
        second = f"{principal}-work{n}"
        if partition_of(episode_key(tenant, second), partitions) == wanted:
            return first, second
    raise AssertionError("no second project on the same partition in 1000 tries")


def projects_over_every_partition(tenant: str, count: int, partitions: int) -> list[str]:
    """``count`` project names of ``tenant`` dealt round-robin over all ``partitions``, so a test
    that needs its projects spread does not depend on how a random tenant prefix hashes."""
    buckets: dict[int, list[str]] = {p: [] for p in range(partitions)}
    per_partition = -(-count // partitions)
    for n in range(100 * count * partitions):
        name = f"proj{n}"
        bucket = buckets[partition_of(episode_key(tenant, name), partitions)]
        if len(bucket) < per_partition:
            bucket.append(name)
        if sum(map(len, buckets.values())) == per_partition * partitions:
            break
    else:
        raise AssertionError(f"no {count} projects over {partitions} partitions")
    dealt = [buckets[p][rank] for rank in range(per_partition) for p in range(partitions)]
    return dealt[:count]


def projects_on_two_partitions(tenant: str, principal: str, partitions: int) -> tuple[str, str]:
    """Two project names of ``principal`` whose episodes land on different partitions."""
    first = f"{principal}-home"
    taken = partition_of(episode_key(tenant, first), partitions)
    for n in range(1000):
        second = f"{principal}-work{n}"
        if partition_of(episode_key(tenant, second), partitions) != taken:
            return first, second
    raise AssertionError("no second project on another partition in 1000 tries")


def fault_turns(
    tenant: str, count: int, *, principals: int = 40, partitions: int = 3, spanning: bool = False
) -> list[TurnAppended]:
    """``count`` turns, round-robin over ``principals``, identical for identical arguments."""
    place = projects_on_two_partitions if spanning else projects_on_one_partition
    projects = {p: place(tenant, f"u{p}", partitions) for p in range(principals)}
    turns = []
    for i in range(count):
        p = i % principals
        n = i // principals  # this principal's n-th turn
        text = TEMPLATES[(n + p) % len(TEMPLATES)].format(
            city=CITIES[(n // 3 + p) % len(CITIES)],
            org=ORGS[(n // 5 + p) % len(ORGS)],
            pref=PREFERENCES[(n // 4 + p) % len(PREFERENCES)],
            sibling=SIBLINGS[p % len(SIBLINGS)],
        )
        turns.append(
            TurnAppended(
                event_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{tenant}/faults/{i}"),
                tenant=tenant,
                principal=f"u{p}",
                project=projects[p][n % 2],
                session=f"s{n // 10}",
                occurred_at=EPOCH + timedelta(seconds=i),
                messages=[Message(ordinal=0, role="user", content=text)],
            )
        )
    return turns
