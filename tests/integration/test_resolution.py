"""Resolution on real Kafka and PostgreSQL: supersede, reinforce, conflict, retract, promote —
decided by event time and authority, never by processing time."""

from __future__ import annotations

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from engram.projections.reads.queries import list_beliefs, list_refusals
from engram.schemas.common import Role, Trust
from engram.schemas.episodes import Message, TurnAppended
from tests.support.episodes import turn
from tests.support.isolation import Isolated
from tests.support.projecting import batch_of, claim, project_all

pytestmark = pytest.mark.integration


async def test_a_changed_preference_supersedes_rather_than_duplicates(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    dark = turn(t, "ana", "p", "I prefer dark mode.", seq=0)
    light = turn(t, "ana", "p", "These days I prefer light mode.", seq=1)
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                dark,
                claim("I", "prefers", "dark mode", "I prefer dark mode", facet="interface theme"),
            ),
            batch_of(
                light,
                claim("I", "prefers", "light mode", "I prefer light mode", facet="interface theme"),
                offset=1,
            ),
        ],
    )
    current = await list_beliefs(pool, tenant=t, principal="ana")
    assert [(b.object, b.status) for b in current] == [("light mode", "active")]
    everything = await list_beliefs(pool, tenant=t, principal="ana", include_all=True)
    old = next(b for b in everything if b.object == "dark mode")
    assert old.status == "superseded" and old.superseded_by == current[0].belief_id
    assert old.valid_to == light.occurred_at == old.known_to
    as_of_first = await list_beliefs(pool, tenant=t, principal="ana", as_of=dark.occurred_at)
    assert [b.object for b in as_of_first] == ["dark mode"]


async def test_a_duplicate_reinforces_without_a_new_row(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    first = turn(t, "ana", "p", "I live in Lisbon.", seq=0)
    again = turn(t, "ana", "p", "As I said, I live in Lisbon.", seq=1, session="s2")
    await project_all(
        kafka,
        pool,
        [
            batch_of(first, claim("I", "lives_in", "Lisbon", "I live in Lisbon")),
            batch_of(again, claim("I", "lives_in", "Lisbon", "I live in Lisbon"), offset=1),
        ],
    )
    [belief] = await list_beliefs(pool, tenant=t, principal="ana", include_all=True)
    assert belief.corroboration == 2 and len(belief.evidence) == 2
    assert belief.confidence > 0.5


def _affirmed(t: str, seq: int, content: str) -> TurnAppended:
    """An assistant conclusion the runtime marked affirmed: lower authority than the user."""
    shape = turn(t, "ana", "p", content, seq=seq)
    message = Message(ordinal=0, role=Role.ASSISTANT, trust=Trust.AFFIRMED, content=content)
    return shape.model_copy(update={"messages": [message]})


async def test_a_newer_lower_authority_value_conflicts_both_stay_live_linked_and_flagged(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(t, "ana", "p", "The project timezone is CET.", seq=0),
                claim("the project", "has_timezone", "CET", "The project timezone is CET"),
            ),
            batch_of(
                _affirmed(t, 1, "The project timezone is UTC."),
                claim("the project", "has_timezone", "UTC", "The project timezone is UTC"),
                offset=1,
            ),
        ],
    )
    beliefs = await list_beliefs(pool, tenant=t, principal="ana")
    assert {(b.object, b.authority) for b in beliefs} == {("CET", "user"), ("UTC", "affirmed")}
    cet, utc = sorted(beliefs, key=lambda b: b.object)
    assert cet.conflicts_with == [utc.belief_id] and utc.conflicts_with == [cet.belief_id]
    assert cet.flagged_for_review and utc.flagged_for_review
    # Both live; what the user only affirmed is weaker evidence, provisional until corroborated.
    assert (cet.status, utc.status) == ("active", "provisional")


async def test_the_users_newer_word_supersedes_an_affirmed_value(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                _affirmed(t, 0, "The project timezone is UTC."),
                claim("the project", "has_timezone", "UTC", "The project timezone is UTC"),
            ),
            batch_of(
                turn(t, "ana", "p", "The project timezone is CET.", seq=1),
                claim("the project", "has_timezone", "CET", "The project timezone is CET"),
                offset=1,
            ),
        ],
    )
    beliefs = await list_beliefs(pool, tenant=t, principal="ana")
    assert [(b.object, b.authority, b.conflicts_with) for b in beliefs] == [("CET", "user", [])]


async def test_a_late_older_session_lands_as_history_whatever_the_arrival_order(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    """Resolution follows event time, not arrival: a session dated before the current value
    corroborates the past value it repeats, which stays superseded — nothing reverts, and
    nothing is flagged that a single-worker replay in time order would not flag."""
    t = isolated.tenant
    cork = turn(t, "ana", "p", "I live in Cork.", seq=0, session="old")
    berlin = turn(t, "ana", "p", "I moved, I live in Berlin.", seq=5, session="new")
    replayed = turn(t, "ana", "p", "I live in Cork.", seq=0, session="old-copy")
    await project_all(
        kafka,
        pool,
        [
            batch_of(cork, claim("I", "lives_in", "Cork", "I live in Cork")),
            batch_of(berlin, claim("I", "lives_in", "Berlin", "I live in Berlin"), offset=1),
            batch_of(replayed, claim("I", "lives_in", "Cork", "I live in Cork"), offset=2),
        ],
    )
    current = await list_beliefs(pool, tenant=t, principal="ana")
    assert [(b.object, b.flagged_for_review) for b in current] == [("Berlin", False)]
    everything = await list_beliefs(pool, tenant=t, principal="ana", include_all=True)
    old = next(b for b in everything if b.object == "Cork")
    assert old.status == "superseded" and old.superseded_by == current[0].belief_id
    assert old.corroboration == 2 and old.valid_to == berlin.occurred_at


async def test_history_written_before_object_keys_were_stored_is_still_met(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    """Beliefs from before migration 0006 have no stored object key; the projector must still
    load them as history, or a replayed older value would be resolved as new."""
    t = isolated.tenant
    cork = turn(t, "ana", "p", "I live in Cork.", seq=0, session="old")
    oslo = turn(t, "ana", "p", "I live in Oslo.", seq=2, session="mid")
    berlin = turn(t, "ana", "p", "I moved, I live in Berlin.", seq=5, session="new")
    await project_all(
        kafka,
        pool,
        [
            batch_of(cork, claim("I", "lives_in", "Cork", "I live in Cork")),
            batch_of(oslo, claim("I", "lives_in", "Oslo", "I live in Oslo"), offset=1),
            batch_of(berlin, claim("I", "lives_in", "Berlin", "I live in Berlin"), offset=2),
        ],
    )
    await pool.execute("UPDATE belief SET object_key = NULL WHERE tenant = $1", t)
    replayed = turn(t, "ana", "p", "I live in Cork.", seq=0, session="old-copy")
    await project_all(
        kafka,
        pool,
        [batch_of(replayed, claim("I", "lives_in", "Cork", "I live in Cork"), offset=3)],
    )
    current = await list_beliefs(pool, tenant=t, principal="ana")
    assert [b.object for b in current] == ["Berlin"]
    everything = await list_beliefs(pool, tenant=t, principal="ana", include_all=True)
    old = next(b for b in everything if b.object == "Cork")
    assert old.status == "superseded" and old.corroboration == 2


async def test_an_earlier_dated_value_arriving_late_lands_as_superseded_history(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    """The interval comes from event times: Riga held from its statement until Berlin's."""
    t = isolated.tenant
    later = turn(t, "ana", "p", "I live in Berlin.", seq=5)
    earlier = turn(t, "ana", "p", "I live in Riga.", seq=1)
    await project_all(
        kafka,
        pool,
        [
            batch_of(later, claim("I", "lives_in", "Berlin", "I live in Berlin")),
            batch_of(earlier, claim("I", "lives_in", "Riga", "I live in Riga"), offset=1),
        ],
    )
    [berlin] = await list_beliefs(pool, tenant=t, principal="ana")
    everything = await list_beliefs(pool, tenant=t, principal="ana", include_all=True)
    riga = next(b for b in everything if b.object == "Riga")
    assert berlin.object == "Berlin" and riga.status == "superseded"
    assert (riga.valid_from, riga.valid_to) == (earlier.occurred_at, later.occurred_at)
    assert riga.superseded_by == berlin.belief_id
    assert await list_refusals(pool, tenant=t, principal="ana") == []


async def test_two_values_from_one_message_keep_the_first_and_refuse_the_second(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    both = turn(t, "ana", "p", "I live in Oslo. I live in Bergen.", seq=0)
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                both,
                claim("I", "lives_in", "Oslo", "I live in Oslo"),
                claim("I", "lives_in", "Bergen", "I live in Bergen"),
            ),
        ],
    )
    assert [b.object for b in await list_beliefs(pool, tenant=t, principal="ana")] == ["Oslo"]
    [refusal] = await list_refusals(pool, tenant=t, principal="ana")
    assert refusal.reason == "conflicting_value" and refusal.quote == "I live in Bergen"


async def test_a_retraction_retires_only_what_it_retracts(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    owns = turn(t, "ana", "p", "I have a watch, a car and a bike. I prefer tea.", seq=0)
    gone = turn(t, "ana", "p", "I no longer have my watch and my car.", seq=1)
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                owns,
                claim("I", "owns", "watch", "I have a watch"),
                claim("I", "owns", "car", "a car"),
                claim("I", "owns", "bike", "a bike"),
                claim("I", "prefers", "tea", "I prefer tea", facet="beverage"),
            ),
            batch_of(
                gone,
                claim("I", "owns", "watch", "I no longer have my watch", polarity="retract"),
                claim("I", "owns", "car", "my car", polarity="retract"),
                offset=1,
            ),
        ],
    )
    current = await list_beliefs(pool, tenant=t, principal="ana")
    asserted = {(b.relation, b.object) for b in current if b.polarity == "assert"}
    assert asserted == {("owns", "bike"), ("prefers", "tea")}
    retracted = {b.object for b in current if b.polarity == "retract"}
    assert retracted == {"watch", "car"}


async def test_a_belief_corroborated_in_two_projects_is_promoted_to_user_scope(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(t, "ana", "garden", "I prefer concise answers.", seq=0),
                claim(
                    "I",
                    "prefers",
                    "concise answers",
                    "I prefer concise answers",
                    facet="answer style",
                ),
            ),
            batch_of(
                turn(t, "ana", "kitchen", "I prefer concise answers.", seq=1),
                claim(
                    "I",
                    "prefers",
                    "concise answers",
                    "I prefer concise answers",
                    facet="answer style",
                ),
                offset=1,
            ),
            batch_of(
                turn(t, "ana", "garden", "The deploy is due on Friday.", seq=2),
                claim("the deploy", "due_on", "Friday", "due on Friday"),
                offset=2,
            ),
        ],
    )
    beliefs = {b.object: b for b in await list_beliefs(pool, tenant=t, principal="ana")}
    promoted = beliefs["concise answers"]
    assert promoted.scope == "user"
    assert promoted.origin_scopes == ["project:garden", "project:kitchen"]
    assert beliefs["Friday"].scope == "project:garden"
    model = await pool.fetch(
        "SELECT value FROM user_model WHERE tenant = $1 AND principal = 'ana'", t
    )
    assert [r["value"] for r in model] == ["concise answers"]
    events = await pool.fetch(
        "SELECT payload->>'type' AS type FROM memory_event_outbox WHERE tenant = $1 ORDER BY sequence",
        t,
    )
    assert [e["type"] for e in events].count("memory.promoted") == 1


async def test_the_database_refuses_a_second_current_value_written_directly(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await project_all(
        kafka,
        pool,
        [
            batch_of(
                turn(t, "ana", "p", "I live in Lisbon.", seq=0),
                claim("I", "lives_in", "Lisbon", "I live in Lisbon"),
            ),
        ],
    )
    with pytest.raises(asyncpg.ExclusionViolationError):
        await pool.execute(
            """
            INSERT INTO belief (belief_id, tenant, principal, subject_kind, subject_key, relation,
                object_kind, object_text, statement, belief_type, polarity, authority, scope,
                origin_scopes, portability, confidence, status, is_single, last_reinforced_at,
                valid_from, known_from, formation_run, policy_version, role)
            SELECT gen_random_uuid(), tenant, principal, subject_kind, subject_key, relation,
                'entity', 'Madrid', 'speaker lives in Madrid', belief_type, 'assert', authority,
                scope, origin_scopes, portability, confidence, 'active', true, now(),
                valid_from + interval '1 day', known_from + interval '1 day', formation_run,
                policy_version, role
            FROM belief WHERE tenant = $1
            """,
            t,
        )


async def test_a_past_home_is_stored_as_history_beside_the_current_one(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    """A state told in the past is written with its end, beside the current single value, and
    reads "used to"; neither replaces the other."""
    t = isolated.tenant
    now = turn(t, "ana", "p", "I live in Bergen.", seq=0)
    before = turn(t, "ana", "p", "I used to live in Tromsø.", seq=1)
    await project_all(
        kafka,
        pool,
        [
            batch_of(now, claim("I", "lives_in", "Bergen", "I live in Bergen")),
            batch_of(
                before,
                claim("I", "lives_in", "Tromsø", "I used to live in Tromsø", tense="past"),
                offset=1,
            ),
        ],
    )
    current = await list_beliefs(pool, tenant=t, principal="ana")
    by_object = {b.object: b for b in current}
    assert set(by_object) == {"Bergen", "Tromsø"}
    assert by_object["Bergen"].valid_to is None
    assert by_object["Tromsø"].valid_to == before.occurred_at
    assert by_object["Tromsø"].readable == "ana used to live in Tromsø"
    assert by_object["Bergen"].readable == "ana lives in Bergen"
