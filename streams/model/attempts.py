"""Asking the model with bounded retries, and keeping a content-free record of every attempt.

One message gets at most ``max_attempts`` calls (:func:`infra.retry.retry`), waiting
``retry_after_s`` after the first failure and doubling. A failure that another call cannot mend
(the endpoint refused the request: a 4xx other than 408 and 429, which the error itself says:
it is not ``retriable``) is not retried. Each attempt — answered or failed — is handed to
``record`` as an :class:`Attempt`: prompt and reply SHA-256, latency, token counts, status and
number, never the prompt or reply bodies. When every attempt failed, the last error is raised
with the number of attempts made; the caller decides between falling back and failing the
episode.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from engram.infra.backoff import Backoff
from engram.infra.errors import EngramFailure
from engram.infra.retry import retry
from engram.streams.model.extractor import ModelAnswer, ModelExtractionError

AttemptStatus = Literal["answered", "failed", "fallback"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One model call as the audit keeps it, or (status ``fallback``) the decision to form
    without the model after ``number`` failed calls."""

    number: int
    status: AttemptStatus
    failure: str | None = None
    http_status: int | None = None
    prompt_sha256: str | None = None
    reply_sha256: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    proposals: int | None = None


@dataclass(frozen=True, slots=True)
class RetrySchedule:
    max_attempts: int
    retry_after_s: float

    @property
    def backoff(self) -> Backoff:
        return Backoff(self.retry_after_s)


class AttemptsExhausted(EngramFailure):
    """Every attempt at one message failed; ``error`` is the last one."""

    code = "model_attempts_exhausted"
    retriable = True
    exit_code = 1

    def __init__(self, error: ModelExtractionError, attempts: int) -> None:
        super().__init__(f"{error} (after {attempts} attempt{'s' if attempts != 1 else ''})")
        self.error = error
        self.attempts = attempts
        self.kind = error.kind


def answered(number: int, answer: ModelAnswer, latency_s: float) -> Attempt:
    usage = answer.usage
    return Attempt(
        number=number,
        status="answered",
        prompt_sha256=answer.prompt_sha256,
        reply_sha256=answer.reply_sha256,
        latency_s=latency_s,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        total_tokens=usage.total_tokens if usage else None,
        proposals=len(answer.proposals),
    )


def failed(number: int, error: ModelExtractionError, latency_s: float) -> Attempt:
    return Attempt(
        number=number,
        status="failed",
        failure=error.kind,
        http_status=error.status,
        prompt_sha256=error.prompt_sha256,
        reply_sha256=error.reply_sha256,
        latency_s=latency_s,
    )


async def ask_with_retries(
    ask: Callable[[], Awaitable[ModelAnswer]],
    *,
    schedule: RetrySchedule,
    record: Callable[[Attempt], Awaitable[None]],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> ModelAnswer:
    """The first answer among ``schedule.max_attempts`` calls of ``ask``; raises
    :class:`AttemptsExhausted` when none answered. Cancellation is never recorded or retried,
    and a failure to record an attempt is not a model failure: it propagates at once."""
    number = 0

    async def attempt() -> ModelAnswer:
        nonlocal number
        number += 1
        started = time.perf_counter()
        try:
            answer = await ask()
        except ModelExtractionError as error:
            await record(failed(number, error, time.perf_counter() - started))
            raise
        await record(answered(number, answer, time.perf_counter() - started))
        return answer

    try:
        return await retry(
            attempt,
            backoff=schedule.backoff,
            attempts=schedule.max_attempts,
            only=_model_failure,
            sleep=sleep,
        )
    except ModelExtractionError as error:
        raise AttemptsExhausted(error, number) from None


def _model_failure(error: Exception) -> bool:
    return isinstance(error, ModelExtractionError)
