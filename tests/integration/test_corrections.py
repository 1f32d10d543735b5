"""Corrections are evidence on the log, matched by content, and they survive replay; deletion
leaves only a hash; forgetting a person leaves nothing that names them. Real Kafka, real
PostgreSQL, a real worker process."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from engram.generations.registry import pin_policy
from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.policies.behaviour import committed_behaviour_digest
from engram.policies.document import PolicyDocument, render_policy_yaml
from engram.projections.beliefs.digest import drop_projections, projection_digest
from engram.projections.reads.queries import BeliefView, list_beliefs, list_refusals
from engram.schemas.api import LogPosition
from engram.schemas.corrections import CorrectionKind
from engram.schemas.episodes import TurnAppended
from engram.service.corrections import Corrections, InvalidCorrection
from engram.service.sessions import open_session, session_of
from engram.service.tokens import create_token, grant_for
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.episodes import turn
from tests.support.indexing import indexed_to_the_end
from tests.support.isolation import Isolated, running_worker
from tests.support.projecting import seed_two_principals

pytestmark = pytest.mark.integration

WAIT_S = 90


class Memory:
    """One principal's memory on real services: append turns, correct, read back."""

    def __init__(self, isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool) -> None:
        self.isolated, self.kafka, self.pool = isolated, kafka, pool
        self.service = Corrections(pool, kafka)
        self.positions: list[LogPosition] = []

    async def say(self, *turns: TurnAppended) -> None:
        async with EpisodeProducer(self.kafka) as producer:
            appended = await producer.publish_many(turns)
        await self._formed(appended)

    async def _formed(self, positions: list[LogPosition]) -> None:
        self.positions += positions
        await wait_for_watermarks(self.pool, positions, timeout_s=WAIT_S)
        # The message index is a stage of its own: the bars below cover it once it has read
        # everything formed.
        await indexed_to_the_end(self.kafka, self.pool, timeout_s=WAIT_S)

    async def correct(self, belief: BeliefView, kind: CorrectionKind, **extra: str) -> None:
        position = await self.service.correct(
            tenant=self.isolated.tenant,
            principal="ana",
            belief_id=belief.belief_id,
            kind=kind,
            **extra,
        )
        await self._formed([position])

    async def beliefs(self, *, every: bool = False, project: str | None = None) -> list[BeliefView]:
        return await list_beliefs(
            self.pool,
            tenant=self.isolated.tenant,
            principal="ana",
            include_all=every,
            project=project,
        )

    async def one(self, obj: str) -> BeliefView:
        [belief] = [b for b in await self.beliefs(every=True) if b.object == obj]
        return belief


@pytest.fixture
async def memory(isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path) -> AsyncIterator[Memory]:
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    with running_worker(isolated, log_path=tmp_path / "worker.log", env=isolated.env(partitions=1)):
        yield Memory(isolated, kafka, pool)


def _at(when: datetime, t: TurnAppended) -> TurnAppended:
    return t.model_copy(update={"occurred_at": when})


async def test_untrue_retires_and_only_a_later_statement_forms_it_again(memory: Memory) -> None:
    t = memory.isolated.tenant
    await memory.say(turn(t, "ana", "p", "I live in Lisbon.", seq=0))
    await memory.correct(await memory.one("Lisbon"), CorrectionKind.UNTRUE)
    retired = await memory.one("Lisbon")
    assert retired.status == "retracted" and retired.valid_to is not None
    assert await memory.beliefs() == []

    before = datetime.now(UTC) - timedelta(days=1)
    await memory.say(_at(before, turn(t, "ana", "p", "I live in Lisbon.", seq=1, session="s2")))
    # Dated before the correction, it is resolved before it (event time, not arrival): one
    # more piece of evidence for what the principal then said was untrue, retired with it.
    assert await memory.beliefs() == []
    assert (await memory.one("Lisbon")).corroboration == 2
    assert await list_refusals(memory.pool, tenant=t, principal="ana") == []

    after = datetime.now(UTC) + timedelta(days=1)
    await memory.say(_at(after, turn(t, "ana", "p", "I live in Lisbon.", seq=2, session="s3")))
    [again] = await memory.beliefs()
    assert again.object == "Lisbon" and again.belief_id != retired.belief_id


async def test_changed_supersedes_at_user_authority(memory: Memory) -> None:
    t = memory.isolated.tenant
    await memory.say(turn(t, "ana", "p", "I live in Lisbon.", seq=0))
    old = await memory.one("Lisbon")
    await memory.correct(old, CorrectionKind.CHANGED, replacement="Porto")
    [current] = await memory.beliefs()
    assert (current.object, current.authority, current.status) == ("Porto", "user", "active")
    old = await memory.one("Lisbon")
    assert old.status == "superseded" and old.superseded_by == current.belief_id


async def test_not_here_keeps_the_belief_in_its_origin_and_stops_it_elsewhere(
    memory: Memory,
) -> None:
    t = memory.isolated.tenant
    await memory.say(turn(t, "ana", "home", "I prefer tea.", seq=0))
    belief = (await memory.beliefs())[0]
    await memory.correct(belief, CorrectionKind.NOT_HERE, project="work")
    assert [b.object for b in await memory.beliefs(project="home")] == ["tea"]
    assert await memory.beliefs(project="work") == []
    assert (await memory.beliefs())[0].status == "active"


async def test_unspecified_flags_and_down_weights_but_never_retires(memory: Memory) -> None:
    t = memory.isolated.tenant
    await memory.say(turn(t, "ana", "p", "I use Vim.", seq=0))
    before = (await memory.beliefs())[0]
    await memory.correct(before, CorrectionKind.UNSPECIFIED)
    [after] = await memory.beliefs()
    assert after.status == before.status and after.flagged_for_review  # current, not retired
    assert after.confidence < before.confidence


async def _texts_containing(pool: asyncpg.Pool, word: str) -> list[str]:
    """Every (table.column) in the schema whose text, JSON or bytes (the kept claims batches)
    hold ``word``."""
    columns = await pool.fetch(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'public' "
        "AND data_type IN ('text', 'jsonb', 'ARRAY', 'character varying', 'bytea')"
    )
    found = []
    for column in columns:
        table, name = column["table_name"], column["column_name"]
        text = (
            f"encode(\"{name}\", 'escape')" if column["data_type"] == "bytea" else f'"{name}"::text'
        )
        hits = await pool.fetchval(
            f'SELECT count(*) FROM "{table}" WHERE position($1 in lower({text})) > 0',
            word.lower(),
        )
        if hits:
            found.append(f"{table}.{name}")
    return found


async def _replay(memory: Memory, tmp_path: Path) -> str:
    """Empty every projection and form the whole log again, from offset 0, with a new group."""
    async with memory.pool.acquire() as conn:
        await drop_projections(conn, backlog=True)
    replay = {
        "group_id": f"{memory.kafka.group_id}-replay",
        "claims_topic": f"{memory.kafka.claims_topic}.replay",
    }
    await ensure_topics(memory.isolated.kafka(partitions=1, **replay))
    env = memory.isolated.env(partitions=1, **replay)
    with running_worker(memory.isolated, log_path=tmp_path / "replay.log", env=env):
        await wait_for_watermarks(memory.pool, memory.positions, timeout_s=WAIT_S)
        await indexed_to_the_end(memory.kafka, memory.pool, timeout_s=WAIT_S)
    return await projection_digest(memory.pool)


async def test_a_deleted_belief_leaves_only_its_hash_and_never_forms_again(
    memory: Memory, tmp_path: Path
) -> None:
    t = memory.isolated.tenant
    await memory.say(
        turn(t, "ana", "p", "I live in Zanzibar. I use Vim.", seq=0),
        turn(t, "ana", "p", "Maybe I live in Zanzibar.", seq=1, session="s2"),
    )
    doomed = await memory.one("Zanzibar")
    assert "message.content" in await _texts_containing(memory.pool, "zanzibar")  # indexed
    position = await memory.service.delete(tenant=t, principal="ana", belief_id=doomed.belief_id)
    await memory._formed([position])

    assert [b.object for b in await memory.beliefs(every=True)] == ["Vim"]
    assert await _texts_containing(memory.pool, "zanzibar") == []
    tombstone = await memory.pool.fetchrow("SELECT * FROM belief_tombstone WHERE tenant = $1", t)
    assert tombstone["content_hash"] == doomed.content_hash

    later = _at(
        datetime.now(UTC) + timedelta(days=1), turn(t, "ana", "p", "I live in Zanzibar.", seq=2)
    )
    await memory.say(later)
    assert [b.object for b in await memory.beliefs(every=True)] == ["Vim"]
    assert await _texts_containing(memory.pool, "zanzibar") == []

    first = await projection_digest(memory.pool)
    assert await _replay(memory, tmp_path) == first
    assert await _texts_containing(memory.pool, "zanzibar") == []


async def test_a_forgotten_principal_leaves_only_a_tombstone_even_after_a_replay(
    memory: Memory, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    t = memory.isolated.tenant
    await memory.say(
        turn(t, "ana", "p", "I live in Lisbon and I use Vim.", seq=0),
        turn(t, "bo", "p", "I live in Cork.", seq=1),
    )
    await create_token(pool, tenant=t, principal="ana")
    _, bo_token = await create_token(pool, tenant=t, principal="bo")
    _, operator_token = await create_token(pool, tenant=t, principal=None)
    operator = await grant_for(pool, operator_token)
    ana_session = await open_session(pool, grant=operator, principal="ana", lifetime_s=3600)
    bo_session = await open_session(pool, grant=operator, principal="bo", lifetime_s=3600)
    position = await memory.service.forget(tenant=t, principal="ana")
    await memory._formed([position])
    # an operator's session showing ana ends with her; one showing bo does not
    assert await session_of(pool, ana_session) is None
    assert await session_of(pool, bo_session) is not None

    async def rows_naming_ana() -> dict[str, int]:
        tables = await pool.fetch(
            "SELECT table_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND column_name = 'principal'"
        )
        counts = {}
        for row in tables:
            table = row["table_name"]
            if table == "user_model":
                continue
            counts[table] = await pool.fetchval(
                f'SELECT count(*) FROM "{table}" WHERE tenant = $1 AND principal = $2', t, "ana"
            )
        return {table: n for table, n in counts.items() if n}

    assert await rows_naming_ana() == {}, "api_token and ui_session included: they name her"
    assert await grant_for(pool, bo_token) is not None
    assert await pool.fetchval("SELECT count(*) FROM principal_tombstone") == 1
    assert [b.object for b in await list_beliefs(pool, tenant=t, principal="bo")] == ["Cork"]

    await memory.say(turn(t, "ana", "p", "I live in Oslo.", seq=2, session="s2"))
    assert await rows_naming_ana() == {}

    await _replay(memory, tmp_path)
    assert await rows_naming_ana() == {}
    assert [b.object for b in await list_beliefs(pool, tenant=t, principal="bo")] == ["Cork"]


async def test_corrections_replay_to_the_same_projection(memory: Memory, tmp_path: Path) -> None:
    t = memory.isolated.tenant
    await memory.say(
        turn(t, "ana", "p", "I live in Lisbon. I prefer tea. I use Vim.", seq=0),
        turn(t, "ana", "q", "I prefer tea.", seq=1, session="s2"),
    )
    await memory.correct(await memory.one("Lisbon"), CorrectionKind.CHANGED, replacement="Porto")
    await memory.correct(await memory.one("Vim"), CorrectionKind.UNTRUE)
    await memory.correct(await memory.one("tea"), CorrectionKind.NOT_HERE, project="q")
    first = await projection_digest(memory.pool)
    assert await _replay(memory, tmp_path) == first


async def test_a_correction_that_cannot_apply_appends_nothing(
    memory: Memory, isolated: Isolated
) -> None:
    t = isolated.tenant
    await memory.say(turn(t, "ana", "p", "I live in Lisbon.", seq=0))
    belief = await memory.one("Lisbon")
    service = memory.service
    with pytest.raises(InvalidCorrection, match="needs the new value"):
        await service.correct(
            tenant=t, principal="ana", belief_id=belief.belief_id, kind=CorrectionKind.CHANGED
        )
    with pytest.raises(InvalidCorrection, match="refused"):
        await service.correct(
            tenant=t,
            principal="ana",
            belief_id=belief.belief_id,
            kind=CorrectionKind.CHANGED,
            replacement="sk-proj-Abc123Def456Ghi789Jkl012Mno345",
        )
    with pytest.raises(LookupError):
        await service.correct(
            tenant=t, principal="bo", belief_id=belief.belief_id, kind=CorrectionKind.UNTRUE
        )
    with pytest.raises(LookupError):
        await service.delete(tenant=t, principal="ana", belief_id=uuid.uuid4())
    end = await _log_end(memory.kafka)
    assert end == 1, "only the turn is on the log"


async def _log_end(kafka: KafkaSettings) -> int:
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap)
    await consumer.start()
    try:
        ends = await consumer.end_offsets([TopicPartition(kafka.episodes_topic, 0)])
        return int(sum(ends.values()))
    finally:
        await consumer.stop()


async def test_a_replacement_is_checked_under_the_policy_in_force_not_the_defaults(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    """A policy that forms no ``lives_in`` refuses "Porto" as a new home, where the defaults
    admit it: the check uses the policy the correction will form under — the generation's once
    a worker pinned one, before that the configured policy file."""
    t = isolated.tenant
    await seed_two_principals(kafka, pool, t)
    lisbon = await pool.fetchval(
        "SELECT belief_id FROM belief WHERE tenant = $1 AND principal = 'ana'", t
    )
    narrow = PolicyDocument.model_validate({"relations": {"enabled": ["prefers"]}})
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("relations:\n  enabled: [prefers]\n", encoding="utf-8")

    def move(service: Corrections) -> Awaitable[object]:
        return service.correct(
            tenant=t,
            principal="ana",
            belief_id=lisbon,
            kind=CorrectionKind.CHANGED,
            replacement="Porto",
        )

    assert await move(Corrections(pool, kafka)), "no policy pinned, none configured: defaults"
    with pytest.raises(InvalidCorrection, match="the replacement was refused"):
        await move(Corrections(pool, kafka, policy_file=policy_file))

    pinned = narrow.policy(behaviour_digest=committed_behaviour_digest(), prompt_digest=None)
    await pin_policy(pool, pinned.version, render_policy_yaml(pinned))
    with pytest.raises(InvalidCorrection, match="the replacement was refused"):
        await move(Corrections(pool, kafka))  # the live generation's, whatever is configured
    wide = tmp_path / "wide.yaml"
    wide.write_text("{}\n", encoding="utf-8")
    with pytest.raises(InvalidCorrection, match="the replacement was refused"):
        await move(Corrections(pool, kafka, policy_file=wide))
