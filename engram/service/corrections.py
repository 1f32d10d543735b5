"""Correcting, deleting and forgetting: checked here, appended to the log, applied by formation.

Every call is scoped by tenant and principal: a belief that does not exist or belongs to someone
else is :class:`BeliefNotFound` (a 404, not a 403: no existence oracle) and nothing is appended.
A correction that cannot apply — ``changed`` without a replacement, a replacement for another
kind, a replacement that admission or a gate refuses — is :class:`InvalidCorrection`, naming the
problem, and nothing is appended either. What is appended is the evidence; the projector applies
it in log order, and ``wait`` lets a caller block until the formed watermark passes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import asyncpg
from pydantic import ValidationError

from engram.formation.corrections import form_correction
from engram.formation.policy import FormationPolicy
from engram.generations.reading import reading, serving_policy
from engram.infra.errors import EngramFailure
from engram.infra.settings import KafkaSettings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.keys.store import receipt_salt
from engram.policies.behaviour import committed_behaviour_digest
from engram.policies.document import load_policy_file
from engram.policies.in_force import pinned_policy
from engram.projections.reads.queries import BeliefContent, belief_content
from engram.schemas.api import LogPosition
from engram.schemas.claims import SourcePosition
from engram.schemas.common import forgetting_receipt_id
from engram.schemas.corrections import (
    BeliefCorrected,
    BeliefDeleted,
    CorrectionKind,
    PrincipalForgotten,
)
from engram.schemas.log import OpenEvent
from engram.sealing.events import Sealer
from engram.watermarks.waiting import wait_for_watermarks

CORRECTION_SESSION = "corrections"
FORGET_PROJECT = "principals"
"""The project a ``principal.forgotten`` event is keyed by: it belongs to no project."""


class BeliefNotFound(EngramFailure, LookupError):
    code = "belief_not_found"
    exit_code = 1

    def __init__(self, belief_id: uuid.UUID) -> None:
        super().__init__(f"no belief {belief_id} for this principal")


class InvalidCorrection(EngramFailure, ValueError):
    """The correction cannot apply; the message says why and what to do.

    ``field`` is the request field at fault (``replacement``, ``project``), which each door
    spells its own way: ``str()`` names the JSON field, as the API and the MCP tools take it;
    the CLI names its flag with :meth:`naming`."""

    code = "invalid_correction"

    def __init__(self, reason: str, *, field: str | None = None) -> None:
        self.reason = reason
        self.field = field
        super().__init__(self.naming(lambda name: f"`{name}`"))

    def naming(self, spell: Callable[[str], str]) -> str:
        """The message with ``{field}`` spelled by ``spell`` (a JSON field, a CLI flag)."""
        if self.field is None:
            return self.reason
        return self.reason.replace("{field}", spell(self.field))


class Corrections:
    """``policy`` fixes the policy a replacement is checked under; by default it is the policy
    in force for the principal (:meth:`policy_in_force`), resolved on every correction."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        kafka: KafkaSettings,
        policy: FormationPolicy | None = None,
        *,
        policy_file: Path | None = None,
        sealer: Sealer | None = None,
    ) -> None:
        self._sealer = sealer
        self._pool = pool
        self._kafka = kafka
        self._policy = policy
        self._policy_file = policy_file

    async def policy_in_force(self, tenant: str, principal: str) -> FormationPolicy:
        """The policy the principal's correction will form under: the one pinned on the
        generation that serves them (the live one unless one was promoted for them), as a
        worker resolves it; before any worker has pinned one, ``policy_file`` (the worker's
        ENGRAM_FORMATION_POLICY_FILE), else the defaults."""
        if self._policy is not None:
            return self._policy
        generation, pinned = await serving_policy(self._pool, (tenant, principal))
        if pinned is None and self._policy_file is not None:
            document = load_policy_file(self._policy_file)
            return document.policy(behaviour_digest=_behaviour(), prompt_digest=None)
        return pinned_policy(pinned, generation=f"generation {generation}")

    async def correct(
        self,
        *,
        tenant: str,
        principal: str,
        belief_id: uuid.UUID,
        kind: CorrectionKind,
        replacement: str | None = None,
        project: str | None = None,
    ) -> LogPosition:
        event = await self.check(
            tenant=tenant,
            principal=principal,
            belief_id=belief_id,
            kind=kind,
            replacement=replacement,
            project=project,
        )
        return await self._append(event)

    async def check(
        self,
        *,
        tenant: str,
        principal: str,
        belief_id: uuid.UUID,
        kind: CorrectionKind,
        replacement: str | None = None,
        project: str | None = None,
    ) -> BeliefCorrected:
        """Every check :meth:`correct` makes, appending nothing: the event it would append, or
        :class:`BeliefNotFound` / :class:`InvalidCorrection`. The inspector shows what a
        correction will do with it before the person sends it."""
        found = await self._belief(tenant, principal, belief_id)
        if kind is CorrectionKind.CHANGED and not (replacement or "").strip():
            raise InvalidCorrection(
                "a 'changed' correction needs the new value in {field}", field="replacement"
            )
        if kind is not CorrectionKind.CHANGED and replacement is not None:
            raise InvalidCorrection(
                f"{{field}} applies only to 'changed', not to '{kind}'", field="replacement"
            )
        try:
            event = BeliefCorrected(
                event_id=uuid.uuid4(),
                tenant=tenant,
                principal=principal,
                project=project or _origin_project(found.scopes),
                session=CORRECTION_SESSION,
                occurred_at=datetime.now(UTC),
                belief_id=belief_id,
                kind=kind,
                content=found.content,
                content_hash=_hash(found),
                statement=found.statement,
                replacement=replacement.strip() if replacement else None,
            )
        except ValidationError as error:  # the text contract, for callers that skip the API's
            problem = error.errors()[0]
            field = str(problem["loc"][0]) if problem["loc"] else None
            prefix = "{field}: " if field else ""
            raise InvalidCorrection(
                f"{prefix}{problem['msg']}; nothing was appended", field=field
            ) from None
        await self._check_replacement(event)
        return event

    async def delete(self, *, tenant: str, principal: str, belief_id: uuid.UUID) -> LogPosition:
        found = await self._belief(tenant, principal, belief_id)
        event = BeliefDeleted(
            event_id=uuid.uuid4(),
            tenant=tenant,
            principal=principal,
            project=_origin_project(found.scopes),
            session=CORRECTION_SESSION,
            occurred_at=datetime.now(UTC),
            belief_id=belief_id,
            content_hash=_hash(found),
        )
        return await self._append(event)

    async def forget(self, *, tenant: str, principal: str) -> LogPosition:
        """Append the forgetting. The position answered carries the id of its receipt, not of
        its record on the log: that record names the principal's pseudonym, and the receipt is
        kept beside the hash of their name, so the two ids must not be one
        (:func:`engram.schemas.common.forgetting_receipt_id`). The salt is read before the
        append, while the key lives: the projector may apply the forgetting, and delete the
        salt with the key, before the producer returns."""
        event = PrincipalForgotten(
            event_id=uuid.uuid4(),
            tenant=tenant,
            principal=principal,
            project=FORGET_PROJECT,
            session=CORRECTION_SESSION,
            occurred_at=datetime.now(UTC),
        )
        if self._sealer is not None:
            await self._sealer.keyed(tenant, principal)
        salt = await receipt_salt(self._pool, tenant, principal)
        position = await self._append(event)
        receipt = forgetting_receipt_id(event.event_id, salt)
        return position.model_copy(update={"event_id": receipt})

    async def wait(self, position: LogPosition, *, timeout_s: float) -> None:
        """Return once the correction is applied (the project's formed watermark passed it)."""
        await wait_for_watermarks(self._pool, [position], timeout_s=timeout_s)

    async def _belief(self, tenant: str, principal: str, belief_id: uuid.UUID) -> BeliefContent:
        async with reading(self._pool, principal=(tenant, principal)) as conn:
            found = await belief_content(
                conn, tenant=tenant, principal=principal, belief_id=belief_id
            )
        if found is None:
            raise BeliefNotFound(belief_id)
        return found

    async def _check_replacement(self, event: BeliefCorrected) -> None:
        """The replacement goes through the same admission and gates as any statement, under
        the policy it will form under."""
        if event.replacement is None:
            return
        policy = await self.policy_in_force(event.tenant, event.principal)
        batch = form_correction(
            event, policy, source=SourcePosition(topic="check", partition=0, offset=0)
        )
        if not batch.candidates:
            refusal = batch.refusals[0]
            raise InvalidCorrection(
                f"the replacement was refused ({refusal.reason.value}: {refusal.detail}); "
                "nothing was appended"
            )

    async def _append(self, event: OpenEvent) -> LogPosition:
        await ensure_topics(self._kafka)
        async with EpisodeProducer(self._kafka, self._sealer) as producer:
            return await producer.publish(event)


@cache
def _behaviour() -> str:
    """The build's behaviour digest, read once per process."""
    return committed_behaviour_digest()


def _origin_project(scopes: list[str]) -> str:
    """The project a correction is ordered with by default: where the belief was learned."""
    for scope in scopes:
        if scope.startswith("project:"):
            return scope.removeprefix("project:")
    raise InvalidCorrection("the belief names no project; say which in {field}", field="project")


def _hash(found: BeliefContent) -> str:
    if found.content_hash is None:
        raise InvalidCorrection(
            "this belief was formed before content hashes existed; re-derive it, then correct it"
        )
    return found.content_hash
