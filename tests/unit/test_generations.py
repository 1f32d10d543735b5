"""A generation is named by its policy and scope, reads and writes names of its own, and forms
only the principals it was built for."""

from __future__ import annotations

from datetime import UTC, datetime

from engram.generations.registry import Generation, generation_id, schema_for
from engram.generations.runtime import GenerationLag, generation_kafka
from engram.infra.settings import KafkaSettings


def generation(
    gid: str, *, build: int = 1, tenant: str | None = None, principals: tuple[str, ...] = ()
) -> Generation:
    return Generation(
        gid,
        schema_for(gid),
        "v",
        None,
        tenant,
        principals,
        build,
        "building",
        datetime(2026, 1, 1, tzinfo=UTC),
        None,
    )


def test_the_same_policy_and_scope_name_the_same_generation_so_a_rerun_resumes_it() -> None:
    assert generation_id("v1") == generation_id("v1")
    assert generation_id("v1", ["bob", "ana"]) == generation_id("v1", ["ana", "bob", "ana"])
    assert generation_id("v1") != generation_id("v2")
    assert generation_id("v1") != generation_id("v1", ["ana"])
    assert generation_id("v1") != generation_id("v1", tenant="t")
    assert generation_id("v1").startswith("g") and len(generation_id("v1")) == 9


def test_a_shadow_generation_has_its_own_group_and_topics_but_reads_the_same_log() -> None:
    kafka = KafkaSettings()
    shadow = generation_kafka(kafka, generation("g12345678"))
    assert shadow.episodes_topic == kafka.episodes_topic
    assert shadow.group_id == f"{kafka.group_id}-g12345678"
    assert shadow.claims_topic == f"{kafka.claims_topic}.g12345678"
    assert shadow.memory_events_topic != kafka.memory_events_topic
    assert shadow.dlq_topic != kafka.dlq_topic
    assert generation_kafka(kafka, generation("public")) == kafka


def test_a_generation_built_again_after_a_drop_never_resumes_the_dropped_offsets() -> None:
    kafka = KafkaSettings()
    first = generation_kafka(kafka, generation("g12345678"))
    again = generation_kafka(kafka, generation("g12345678", build=2))
    assert first.group_id != again.group_id and first.claims_topic != again.claims_topic


def test_a_generation_built_for_some_principals_forms_only_theirs() -> None:
    scoped = generation("g1", tenant="t", principals=("ana",))
    assert scoped.serves("t", "ana")
    assert not scoped.serves("t", "bob") and not scoped.serves("u", "ana")
    assert generation("g2").serves("u", "bob") and not generation("g2").scoped


def test_caught_up_means_nothing_left_to_form_and_nothing_left_to_project() -> None:
    assert GenerationLag(head=10, formation=0, projection=0).caught_up
    assert not GenerationLag(head=10, formation=0, projection=1).caught_up
    assert GenerationLag(head=10, formation=2, projection=3).total == 5
