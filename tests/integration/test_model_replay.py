"""Recorded answers through the model arm: in process and over real HTTP, the same beliefs.

The replay endpoint (:mod:`engram.evaluation.replay`) serves a file of answers as an
OpenAI-compatible server; the worker's extractor asks it over HTTP. The harness reads the same
file in process. Both must form the same claims from the same turns, and the endpoint sees the
system prompt first and byte-identical in every request. The sentences are the project's own.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import NAMESPACE_URL, uuid5

import pytest

from engram.evaluation.answers import StaleAnswers, answer_key, load_answers
from engram.evaluation.coverage import Fact, resolve_formed
from engram.evaluation.model_eval import model_coverage, open_answers, replay_settings, with_section
from engram.evaluation.model_run import ModelCalls, form_with_model, replayed
from engram.evaluation.replay import ReplayServer
from engram.formation.vocabulary import RELATIONS
from engram.infra.settings import Settings
from engram.policies.in_force import effective_policy
from engram.policies.prompt import load_extraction_prompt
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.episodes import TurnAppended
from engram.streams.model.prompt import render_system_prompt
from engram.streams.wiring import model_extractor_for

PROMPT = load_extraction_prompt(None)

TURNS = [
    ("user", "I moved to Tromsø last winter and I work as a ferry pilot now."),
    ("assistant", "I keep bees on my roof and I love it."),
    ("user", "I'm going to learn the cello next year."),
    ("assistant", "That sounds lovely, I play the oboe."),
    ("user", "I used to be a librarian before the ferries."),
]

ANSWERS = {
    TURNS[0][1]: [
        {
            "subject": "I",
            "relation": "lives_in",
            "object": "Tromsø",
            "quote": "I moved to Tromsø",
            "polarity": "assert",
            "tense": "present",
        },
        {
            "subject": "I",
            "relation": "has_role",
            "object": "ferry pilot",
            "quote": "I work as a ferry pilot",
            "polarity": "assert",
            "tense": "present",
        },
    ],
    TURNS[2][1]: [
        {
            "subject": "I",
            "relation": "intends_to",
            "object": "learn the cello",
            "quote": "I'm going to learn the cello",
            "polarity": "assert",
            "tense": "future",
        },
    ],
    TURNS[4][1]: [
        {
            "subject": "I",
            "relation": "has_role",
            "object": "librarian",
            "quote": "I used to be a librarian",
            "polarity": "assert",
            "tense": "past",
        },
    ],
}


def _episodes() -> list[TurnAppended]:
    start = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    return [
        TurnAppended(
            event_id=uuid5(NAMESPACE_URL, f"replay-{i}"),
            tenant="t",
            principal="ada",
            project="p",
            session="s1",
            occurred_at=start + timedelta(seconds=30 * i),
            messages=[{"ordinal": 0, "role": role, "content": text}],
        )
        for i, (role, text) in enumerate(TURNS)
    ]


def _write(tmp_path: Path, digest: str) -> tuple[Path, Path, Path]:
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(e.model_dump_json() + "\n" for e in _episodes()))
    answers = tmp_path / "answers.jsonl"
    lines = [json.dumps({"prompt_sha256": digest})]
    lines += [json.dumps({"key": answer_key("user", t), "claims": c}) for t, c in ANSWERS.items()]
    answers.write_text("\n".join(lines) + "\n")
    facts = tmp_path / "facts.jsonl"
    episodes = _episodes()
    facts.write_text(
        "\n".join(
            json.dumps({"principal": "ada", "project": "p", "fact": f, "evidence_event_ids": [e]})
            for f, e in [
                ("Ada is a ferry pilot", str(episodes[0].event_id)),
                ("Ada plans to learn the cello", str(episodes[2].event_id)),
            ]
        )
        + "\n"
    )
    return turns, answers, facts


def _claims(batches: list[ClaimsBatchFormed]) -> list[tuple[str, str, str, str]]:
    return [
        (c.statement, c.quote, c.relation, c.tense.value) for b in batches for c in b.candidates
    ]


def _model_settings(endpoint: str | None = None) -> Settings:
    settings = replay_settings(Settings())
    if endpoint is None:
        return settings
    origin = endpoint.removesuffix("/v1")
    model = settings.model.model_copy(
        update={"endpoint": endpoint, "allowlist": [*settings.model.allowlist, origin]}
    )
    return with_section(settings, model=model)


def _policy(settings: Settings, kind: str = "model"):  # type: ignore[no-untyped-def]
    forced = settings.formation.model_copy(update={"extractor": kind})
    return effective_policy(with_section(settings, formation=forced))


async def test_the_replay_endpoint_and_the_harness_form_the_same_claims(tmp_path: Path) -> None:
    _, path, _ = _write(tmp_path, PROMPT.digest)
    answers = load_answers(path)
    async with ReplayServer(answers) as server:
        settings = _model_settings(server.base_url)
        policy = _policy(settings)
        calls_http = ModelCalls()
        async with model_extractor_for(settings, policy) as extractor:
            over_http = await form_with_model(_episodes(), policy, extractor.propose, calls_http)
        calls = ModelCalls()
        in_process = await form_with_model(
            _episodes(), policy, replayed(answers, policy, calls), calls
        )
    assert _claims(over_http) == _claims(in_process)
    assert len(_claims(in_process)) >= 2
    formed_http = resolve_formed(_episodes(), over_http, policy.version)
    formed_here = resolve_formed(_episodes(), in_process, policy.version)
    assert formed_http.statements == formed_here.statements
    # other speakers' messages are never asked about: every claim of theirs would be refused
    assert calls.asked == calls_http.asked == 3
    assert calls.skipped == {"untrusted_source": 2}
    assert [s.role for s in server.log.sent] == ["user", "user", "user"]
    assert all(s.answered for s in server.log.sent)
    # the system prompt goes first, byte-identical in every request (a cacheable prefix)
    assert server.log.system_first_and_identical
    enabled = set(policy.enabled_relations)
    relations = tuple(r for r in RELATIONS if r.name in enabled)
    assert server.log.system_prompt == render_system_prompt(PROMPT, relations)


async def test_stale_answers_are_named_and_refused_unless_accepted(tmp_path: Path) -> None:
    turns, path, _ = _write(tmp_path, "0" * 64)
    settings = _model_settings()
    policy = _policy(settings)
    with pytest.raises(StaleAnswers, match="record the answers again"):
        open_answers(path, None, policy, accept_stale=False)
    source = open_answers(path, None, policy, accept_stale=True)
    facts = [Fact("ada", "p", "a fact", (str(_episodes()[0].event_id),))]
    report = await model_coverage(turns, facts, policy, settings, source)
    assert report.model is not None
    assert "000000000000" in str(report.model["stale"])
    assert report.total.covered == 1
