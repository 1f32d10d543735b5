"""The model arm as a worker runs it, against the local OpenAI-compatible server and a real,
migrated PostgreSQL: the session's context window, the audit of every attempt without content,
and the fallback to the deterministic claims in ``both`` mode."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import asyncpg
import pytest
from pydantic import SecretStr

from engram.formation.policy import ExtractorKind, FormationPolicy
from engram.infra.metrics import MODEL_SKIPPED
from engram.infra.settings import DatabaseSettings
from engram.policies.prompt import load_extraction_prompt
from engram.schemas.claims import RefusalReason, SourcePosition
from engram.schemas.common import Role
from engram.schemas.episodes import Message, TurnAppended
from engram.streams.formation_stage import FormationStage
from engram.streams.model.arm import model_arm
from engram.streams.model.attempts import AttemptsExhausted, RetrySchedule
from engram.streams.model.extractor import ModelExtractor
from engram.streams.model.receipts import ReceiptStore
from tests.fakes.model_scripts import fenced_content
from tests.fakes.openai_server import FakeOpenAIServer, Reply, completion

pytestmark = pytest.mark.model

MODEL = "audit-model"
TOPIC = "engram.episodes"
CARD = "4111 1111 1111 1111"
WHEN = datetime(2025, 6, 14, 9, 30, tzinfo=UTC)


def turn(
    event: int, *messages: tuple[Role, str], session: str = "evening", day: int = 14
) -> TurnAppended:
    return TurnAppended(
        event_id=UUID(int=event),
        tenant="acme",
        principal="ana",
        project="atlas",
        session=session,
        occurred_at=WHEN.replace(day=day),
        messages=[
            Message(ordinal=i, role=role, content=text) for i, (role, text) in enumerate(messages)
        ],
    )


def at(offset: int) -> SourcePosition:
    return SourcePosition(topic=TOPIC, partition=0, offset=offset)


@asynccontextmanager
async def arm_stage(
    server: FakeOpenAIServer,
    database_url: str,
    kind: ExtractorKind,
    *,
    timeout_s: float = 5.0,
    context_messages: int = 8,
) -> AsyncIterator[FormationStage]:
    extractor = ModelExtractor(
        endpoint=server.base_url,
        model_name=MODEL,
        api_key=SecretStr("sk-test"),
        allowlist=[server.origin],
        timeout_s=timeout_s,
        max_response_bytes=1_048_576,
        prompt=load_extraction_prompt(None),
    )
    policy = FormationPolicy(
        extractor_kind=kind,
        model_name=MODEL,
        model_origin=server.origin,
        prompt_digest=extractor.prompt_digest,
        context_messages=context_messages,
    )
    store = ReceiptStore(DatabaseSettings(url=SecretStr(database_url)))
    schedule = RetrySchedule(max_attempts=3, retry_after_s=0.0)
    try:
        yield FormationStage(policy, model_arm(extractor, store, policy, schedule))
    finally:
        await extractor.aclose()
        await store.close()


def user_turns(server: FakeOpenAIServer) -> list[str]:
    return [request.message("user") for request in server.requests]


async def attempts(pool: asyncpg.Pool) -> list[asyncpg.Record]:
    return list(await pool.fetch("SELECT * FROM model_attempt ORDER BY attempt_id"))


def claim(quote: str, obj: str, relation: str = "lives_in") -> dict[str, Any]:
    return {
        "subject": "I",
        "relation": relation,
        "object": obj,
        "quote": quote,
        "polarity": "assert",
        "tense": "present",
    }


class TestTheModelSeesTheSessionBeforeTheMessage:
    async def test_earlier_messages_of_the_session_are_sent_as_context_redacted(
        self, fresh_database: str
    ) -> None:
        first = turn(
            1,
            (Role.USER, f"We adopted a kitten last week. My card is {CARD}."),
            (Role.ASSISTANT, "Lovely! What did you call her?"),
        )
        second = turn(2, (Role.USER, "Miso. She sleeps on my desk."))
        elsewhere = turn(3, (Role.USER, "Hello again."), session="morning")
        async with (
            FakeOpenAIServer(lambda body: Reply.claims()) as server,
            arm_stage(server, fresh_database, "model") as stage,
        ):
            for offset, episode in enumerate((first, second, elsewhere), start=10):
                await stage.form(episode, at(offset))
        # the assistant's message is never asked about (nothing of it could be kept), yet it is
        # context for the next message like any other
        opening, answer, other = user_turns(server)
        assert "<<<CONTEXT" not in opening and "<<<CONTEXT" not in other
        assert "user: We adopted a kitten last week. My card is [redacted:payment_card]." in answer
        assert answer.startswith("Episode date: 2025-06-14\n<<<CONTEXT ")
        assert "user: We adopted a kitten last week." in answer
        assert "assistant: Lovely! What did you call her?" in answer
        assert answer.index("<<<END CONTEXT") < answer.index("Speaker: user")
        assert all(CARD not in text for text in user_turns(server))

    async def test_the_window_is_bounded_and_the_same_in_a_replay(
        self, fresh_database: str
    ) -> None:
        episodes = [turn(i, (Role.USER, f"Message number {i}.")) for i in range(1, 6)]
        async with (
            FakeOpenAIServer(lambda body: Reply.claims()) as server,
            arm_stage(server, fresh_database, "model", context_messages=2) as stage,
        ):
            for offset, episode in enumerate(episodes):
                await stage.form(episode, at(offset))
            last = user_turns(server)[-1]
            asked = len(server.requests)
            for offset, episode in enumerate(episodes):  # a replay, later rows present
                await stage.form(episode, at(offset))
        assert "Message number 3." in last and "Message number 4." in last
        assert "Message number 2." not in last
        assert len(server.requests) == asked, "every replayed input was found as a receipt"

    async def test_a_quote_taken_from_the_context_is_refused(self, fresh_database: str) -> None:
        def script(body: Any) -> Reply:
            if fenced_content(body).startswith("Yes"):
                return Reply.claims(claim("I moved to Porto", "Porto"))
            return Reply.claims()

        async with (
            FakeOpenAIServer(script) as server,
            arm_stage(server, fresh_database, "model") as stage,
        ):
            await stage.form(turn(1, (Role.USER, "I moved to Porto in May.")), at(0))
            batch = await stage.form(turn(2, (Role.USER, "Yes, it is lovely.")), at(1))
        assert batch.candidates == []
        assert [r.reason for r in batch.refusals] == [RefusalReason.UNLOCATABLE_QUOTE]


class TestAMessageNothingOfWhichCanBeKeptIsNotAsked:
    async def test_other_speakers_and_tools_cost_no_call_and_the_skip_is_counted(
        self, fresh_database: str
    ) -> None:
        episode = turn(
            1,
            (Role.ASSISTANT, "I live in Quito and I love mangoes."),
            (Role.TOOL, "I live in Lima."),
            (Role.USER, "I live in Cusco."),
        )
        before = {
            reason: MODEL_SKIPPED.labels(reason)._value.get()
            for reason in ("untrusted_source", "system_restatement")
        }
        async with (
            FakeOpenAIServer(
                lambda body: Reply.claims(claim("I live in Cusco", "Cusco"))
            ) as server,
            arm_stage(server, fresh_database, "both") as stage,
        ):
            batch = await stage.form(episode, at(1))
        assert [r.message("user").count("Speaker: user") for r in server.requests] == [1]
        assert (
            MODEL_SKIPPED.labels("untrusted_source")._value.get() == before["untrusted_source"] + 2
        )
        assert [c.object.text for c in batch.candidates] == ["Cusco"]
        # the pattern arm still reads the others' words: what it found is refused, with a reason
        assert {r.reason for r in batch.refusals} == {RefusalReason.NOT_SPOKEN_BY_PRINCIPAL}


class TestEveryAttemptIsAuditedWithoutContent:
    async def test_an_answer_after_a_failure_leaves_two_rows_with_digests_and_tokens(
        self, fresh_database: str, pool: asyncpg.Pool
    ) -> None:
        usage = {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333}
        answer = Reply(
            content=json.dumps({"claims": [claim("I live in Lisbon", "Lisbon")]}), usage=usage
        )
        async with FakeOpenAIServer() as server:
            server.enqueue(Reply.error(503, '{"error": {"code": "overloaded"}}'), answer)
            async with arm_stage(server, fresh_database, "model") as stage:
                batch = await stage.form(turn(1, (Role.USER, "I live in Lisbon.")), at(0))
        assert [c.object.text for c in batch.candidates] == ["Lisbon"]
        failed, answered = await attempts(pool)
        assert (failed["attempt"], failed["status"], failed["failure"]) == (
            1,
            "failed",
            "http_status",
        )
        assert failed["http_status"] == 503 and failed["reply_sha256"] is None
        assert (answered["attempt"], answered["status"], answered["failure"]) == (
            2,
            "answered",
            None,
        )
        tokens = ("prompt_tokens", "completion_tokens", "total_tokens")
        assert tuple(answered[name] for name in tokens) == (321, 12, 333)
        sent = server.requests[1].messages
        assert answered["prompt_sha256"] == sha256(json.dumps(sent, sort_keys=True))
        body = completion(answer.content, model=MODEL, usage=usage)
        assert answered["reply_sha256"] == sha256(json.dumps(body))
        assert answered["latency_ms"] > 0 and answered["proposals"] == 1
        assert (answered["episode_id"], answered["message_ordinal"]) == (UUID(int=1), 0)
        for row in (failed, answered):
            assert not any("Lisbon" in str(value) for value in row.values())


class TestBothModeFallsBackToTheDeterministicClaims:
    @pytest.mark.parametrize(
        ("reply", "failure"),
        [
            (Reply.error(500, '{"error": {"type": "server_error"}}'), "http_status"),
            (Reply.text("Sorry, I cannot help with that."), "bad_reply"),
            (Reply.hanging(), "timeout"),
        ],
    )
    async def test_a_failing_model_loses_no_deterministic_claim(
        self, fresh_database: str, pool: asyncpg.Pool, reply: Reply, failure: str
    ) -> None:
        async with (
            FakeOpenAIServer(lambda body: reply) as server,
            arm_stage(server, fresh_database, "both", timeout_s=0.3) as stage,
        ):
            batch = await stage.form(turn(1, (Role.USER, "I live in Lisbon.")), at(0))
        assert len(server.requests) == 3
        assert [(c.relation, c.object.text) for c in batch.candidates] == [("lives_in", "Lisbon")]
        rows = await attempts(pool)
        assert [(r["attempt"], r["status"]) for r in rows] == [
            (1, "failed"),
            (2, "failed"),
            (3, "failed"),
            (3, "fallback"),
        ]
        assert {r["failure"] for r in rows} == {failure}
        assert await pool.fetchval("SELECT count(*) FROM model_receipt") == 0

    async def test_a_model_policy_has_nothing_to_fall_back_to(
        self, fresh_database: str, pool: asyncpg.Pool
    ) -> None:
        async with (
            FakeOpenAIServer(bad_gateway) as server,
            arm_stage(server, fresh_database, "model") as stage,
        ):
            with pytest.raises(AttemptsExhausted) as raised:
                await stage.form(turn(1, (Role.USER, "I live in Lisbon.")), at(0))
        assert (raised.value.kind, raised.value.attempts) == ("http_status", 3)
        assert [r["status"] for r in await attempts(pool)] == ["failed"] * 3


def bad_gateway(body: Any) -> Reply:
    return Reply.error(502, "")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
