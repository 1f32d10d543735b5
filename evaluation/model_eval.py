"""The model arm in the harness: from recorded answers or from an endpoint.

``engram eval coverage --arm model|both`` and ``engram eval formation --arm model|both`` run
the model arm either against the configured endpoint (``ENGRAM_MODEL_*``) or from a file of
recorded answers (``--answers``). Answers name the prompt they were given to; answers for
another prompt than the one in force are stale and refused, unless accepted explicitly, and
then every report says they were.

Recorded answers need no endpoint: without ``ENGRAM_MODEL_ENDPOINT`` and ``ENGRAM_MODEL_NAME``
the policy is the one a worker would run against the replay endpoint at its default address
(:data:`REPLAY_ENDPOINT`, model :data:`REPLAY_MODEL`), so the two paths form the same beliefs.
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engram.evaluation.answers import RecordedAnswers, StaleAnswers, answer_key, load_answers
from engram.evaluation.corpus import Case
from engram.evaluation.coverage import CoverageReport, Fact, measure, resolve_formed
from engram.evaluation.model_run import ModelCalls, case_arm, form_with_model, replayed
from engram.evaluation.replay import ReplayServer
from engram.evaluation.scoring import ArmReport, episode_for, evaluate_episode_arm
from engram.formation.formable import nothing_can_form
from engram.formation.gates import redact
from engram.formation.policy import FormationPolicy
from engram.formation.vocabulary import RELATIONS
from engram.infra.settings import Settings
from engram.ingest.jsonl import read_episodes
from engram.policies.prompt import load_extraction_prompt
from engram.streams.model.context import ContextMessage, context_text, context_window
from engram.streams.model.prompt import new_fence, render_system_prompt, render_user_message
from engram.streams.wiring import model_extractor_for

REPLAY_MODEL = "recorded"
REPLAY_PORT = 8089
REPLAY_ENDPOINT = f"http://127.0.0.1:{REPLAY_PORT}/v1"
"""Where ``engram eval replay`` listens by default, and the origin the answers' policy names."""


def replay_settings(settings: Settings) -> Settings:
    """``settings`` with the replay endpoint's model, unless an endpoint is configured."""
    model = settings.model
    if model.endpoint and model.name:
        return settings
    origin = REPLAY_ENDPOINT.removesuffix("/v1")
    update = {
        "endpoint": REPLAY_ENDPOINT,
        "name": REPLAY_MODEL,
        "allowlist": [*model.allowlist, origin],
    }
    return with_section(settings, model=model.model_copy(update=update))


def with_section(settings: Settings, **sections: object) -> Settings:
    """A copy of ``settings`` with some sections replaced (``model=…``, ``formation=…``)."""
    copied = copy.copy(settings)
    for name, section in sections.items():
        setattr(copied, name, section)
    return copied


@dataclass(frozen=True, slots=True)
class AnswersSource:
    """Recorded answers checked against the prompt in force."""

    answers: RecordedAnswers
    stale: str | None
    """Why they are stale, when they are and that was accepted."""

    def describe(self) -> dict[str, object]:
        return {
            "answers": str(self.answers.path),
            "answers_prompt_sha256": self.answers.prompt_sha256,
            "stale": self.stale,
        }


def open_answers(
    path: Path, prompt_sha256: str | None, policy: FormationPolicy, *, accept_stale: bool
) -> AnswersSource:
    """The answers of ``path`` for ``policy``'s prompt; raises :class:`StaleAnswers` when they
    answer another prompt and ``accept_stale`` is false."""
    answers = load_answers(path, prompt_sha256)
    stale = answers.stale_for(policy.prompt_digest or "")
    if stale is not None and not accept_stale:
        raise StaleAnswers(stale)
    return AnswersSource(answers, stale)


async def model_coverage(
    turns: Path,
    facts: Sequence[Fact],
    policy: FormationPolicy,
    settings: Settings,
    source: AnswersSource | None,
    *,
    show_missed: int = 0,
    seed: int = 0,
    over_http: bool = False,
) -> CoverageReport:
    """Fact coverage with the model arm (``policy``'s kind, model or both): from ``source``'s
    answers, or from the settings' endpoint when there are none. ``over_http``: the answers
    are served by the replay endpoint at :data:`REPLAY_ENDPOINT` and asked over HTTP by the
    worker's extractor (the worker path, the same policy), and the report gives the sizes of
    what was sent and answered."""
    episodes = list(read_episodes(turns))
    calls = ModelCalls()
    sizes: dict[str, object] | None = None
    if source is not None and over_http:
        async with ReplayServer(source.answers, port=REPLAY_PORT) as server:
            async with model_extractor_for(settings, policy) as extractor:
                batches = await form_with_model(episodes, policy, extractor.propose, calls)
            sizes = server.log.sizes()
    elif source is not None:
        batches = await form_with_model(
            episodes, policy, replayed(source.answers, policy, calls), calls
        )
    else:
        async with model_extractor_for(settings, policy) as extractor:
            batches = await form_with_model(episodes, policy, extractor.propose, calls)
    formed = resolve_formed(episodes, batches, policy.version)
    report = measure(turns, facts, policy, show_missed=show_missed, seed=seed, formed=formed)
    report.arm = policy.extractor_kind
    described = source.describe() if source is not None else {"endpoint": settings.model.endpoint}
    report.model = {**described, "model": policy.model_name, "calls": calls.to_dict()}
    if sizes is not None:
        report.model["over_http"] = sizes
    return report


async def replayed_cases(
    cases: Sequence[Case], policy: FormationPolicy, source: AnswersSource
) -> tuple[ArmReport, ModelCalls]:
    """The model arm over the corpus, answered from recorded answers."""
    calls = ModelCalls()
    arm = case_arm(replayed(source.answers, policy, calls), policy, calls)
    return await evaluate_episode_arm("model", cases, arm, policy), calls


def write_corpus_requests(
    cases: Sequence[Case], policy: FormationPolicy, settings: Settings, path: Path
) -> int:
    """Write the request the model arm sends for every message of ``cases`` that it asks
    about, one JSON a line: the answer ``key`` (:func:`.answers.answer_key`), the ``role``,
    and the ``system`` prompt and ``user`` turn exactly as sent (the fence is random, as in
    every request). Returns how many were written."""
    prompt = load_extraction_prompt(settings.formation.prompt_path)
    enabled = set(policy.enabled_relations)
    system = render_system_prompt(prompt, tuple(r for r in RELATIONS if r.name in enabled))
    lines: list[str] = []
    for case in cases:
        episode = episode_for(case)
        for message in episode.messages:
            if nothing_can_form(message) is not None:
                continue
            sent = message.model_copy(
                update={"content": redact(message.content, pii_kinds=policy.pii_kinds)}
            )
            earlier = [
                ContextMessage(m.role, context_text(m.content))
                for m in episode.messages
                if m.ordinal < message.ordinal
            ]
            window = context_window(
                earlier, max_messages=policy.context_messages, max_chars=policy.context_chars
            )
            fenced = "\n".join([sent.content, *(m.content for m in window)])
            user = render_user_message(
                sent,
                new_fence(fenced, secrets.token_hex),
                context=window,
                occurred_on=episode.occurred_at.date(),
            )
            key = answer_key(sent.role.value, sent.content)
            row = {"key": key, "role": sent.role.value, "system": system, "user": user}
            lines.append(json.dumps(row, ensure_ascii=False))
    text = "".join(f"{line}\n" for line in lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return len(lines)
