"""Bounded retries of one model call: every attempt recorded without content, a refused request
not retried, the last error raised once the attempts are spent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from engram.formation.proposals import Proposal
from engram.streams.model.attempts import (
    Attempt,
    AttemptsExhausted,
    RetrySchedule,
    ask_with_retries,
)
from engram.streams.model.extractor import (
    ModelAnswer,
    ModelExtractionError,
    TokenUsage,
    http_status_error,
)

PROMPT = "a" * 64
REPLY = "b" * 64


def error(kind: str = "timeout", status: int | None = None) -> ModelExtractionError:
    if status is not None:
        failure = http_status_error("detail", status)
    else:
        failure = ModelExtractionError(kind, "detail")  # type: ignore[arg-type]
    failure.prompt_sha256 = PROMPT
    return failure


def answer() -> ModelAnswer:
    proposal = Proposal(
        subject="I",
        relation="lives_in",
        object="Lisbon",
        quote="I live in Lisbon",
        polarity="assert",
        tense="present",
        extractor="model:m",
    )
    usage = TokenUsage(prompt_tokens=120, completion_tokens=30, total_tokens=150)
    return ModelAnswer([proposal], PROMPT, REPLY, usage)


def script(*outcomes: ModelAnswer | ModelExtractionError) -> Callable[[], Awaitable[ModelAnswer]]:
    queue = list(outcomes)

    async def ask() -> ModelAnswer:
        outcome = queue.pop(0)
        if isinstance(outcome, ModelExtractionError):
            raise outcome
        return outcome

    return ask


class Recorder:
    def __init__(self) -> None:
        self.attempts: list[Attempt] = []
        self.waits: list[float] = []

    async def record(self, attempt: Attempt) -> None:
        self.attempts.append(attempt)

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


async def run(
    recorder: Recorder, ask: Callable[[], Awaitable[ModelAnswer]], attempts: int = 3
) -> ModelAnswer:
    return await ask_with_retries(
        ask,
        schedule=RetrySchedule(max_attempts=attempts, retry_after_s=0.5),
        record=recorder.record,
        sleep=recorder.sleep,
    )


async def test_an_answer_after_a_failure_records_both_attempts() -> None:
    recorder = Recorder()
    got = await run(recorder, script(error("http_status", 503), answer()))
    assert got.proposals[0].object == "Lisbon"
    failed, answered = recorder.attempts
    assert (failed.number, failed.status, failed.failure, failed.http_status) == (
        1,
        "failed",
        "http_status",
        503,
    )
    assert failed.prompt_sha256 == PROMPT and failed.reply_sha256 is None
    assert (answered.number, answered.status, answered.failure) == (2, "answered", None)
    assert (answered.prompt_tokens, answered.completion_tokens, answered.total_tokens) == (
        120,
        30,
        150,
    )
    assert answered.reply_sha256 == REPLY and answered.proposals == 1
    assert recorder.waits == [0.5]


async def test_spent_attempts_raise_the_last_error_with_their_count() -> None:
    recorder = Recorder()
    with pytest.raises(AttemptsExhausted) as raised:
        await run(recorder, script(error("timeout"), error("bad_reply"), error("connection")))
    assert (raised.value.kind, raised.value.attempts) == ("connection", 3)
    assert [a.status for a in recorder.attempts] == ["failed"] * 3
    assert recorder.waits == [0.5, 1.0]


async def test_a_refused_request_is_not_retried() -> None:
    recorder = Recorder()
    with pytest.raises(AttemptsExhausted) as raised:
        await run(recorder, script(error("http_status", 401), answer()))
    assert raised.value.attempts == 1
    assert recorder.waits == []


@pytest.mark.parametrize(
    ("kind", "status", "expected"),
    [
        ("http_status", 500, True),
        ("http_status", 429, True),
        ("http_status", 408, True),
        ("http_status", 400, False),
        ("http_status", 404, False),
        ("timeout", None, True),
        ("bad_reply", None, True),
    ],
)
def test_what_is_worth_another_call(kind: str, status: int | None, expected: bool) -> None:
    assert error(kind, status).retriable is expected


async def test_a_failure_to_record_an_attempt_is_not_retried_as_a_model_failure() -> None:
    """The audit row of an attempt could not be written (the database is away): asking the
    model again would make a second call for one audit; the failure goes to the caller."""
    recorder = Recorder()

    async def unrecordable(attempt: Attempt) -> None:
        raise ConnectionRefusedError("the database is away")

    with pytest.raises(ConnectionRefusedError):
        await ask_with_retries(
            script(error("timeout"), answer()),
            schedule=RetrySchedule(max_attempts=3, retry_after_s=0.5),
            record=unrecordable,
            sleep=recorder.sleep,
        )
    assert recorder.waits == []
