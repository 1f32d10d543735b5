"""``engram rederive``: form the episodic log again, from offset 0, into a shadow generation.

One process composes what ``engram worker`` composes — the faust formation agent and the belief
projector on one event loop — but placed in the generation: its consumer group (new, so it
reads ``engram.episodes`` from the beginning), its claims topic, its PostgreSQL schema (through
the pools' search path) and the policy from ``--policy``. Corrections and tombstones are
events of the log, so replaying it applies them again in log order. Resuming is free: the
formation offsets are the group's, the projection offsets are the schema's ``projector_offset``,
and the same policy names the same generation. After the head of the log it keeps following
new episodes until stopped (or, with ``--until-caught-up``, exits there).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Annotated

import asyncpg
import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from engram.cli.activation import activation_or_exit
from engram.cli.failures import refuse
from engram.cli.identifiers import identifier
from engram.cli.log import copy_checked
from engram.cli.output import console, err
from engram.formation.policy import FormationPolicy
from engram.generations import registry
from engram.generations.registry import Generation
from engram.generations.runtime import GenerationLag, generation_lag, generation_settings
from engram.generations.schema import create_generation_schema
from engram.infra.db import create_pool
from engram.infra.metrics import REGISTRY
from engram.infra.settings import Settings, load_settings
from engram.ingest.topics import ensure_topics
from engram.policies.document import PolicyFileError, render_policy_yaml
from engram.policies.in_force import effective_policy
from engram.policies.prompt import PromptError
from engram.projections.runner import follow_messages_in_worker, project_in_worker
from engram.schemas.log import LogEvent
from engram.streams.app import EngramStreams, build_app, run_worker
from engram.streams.pipeline import Serves
from engram.streams.wiring import build_stage

POLL_S = 1.0


def rederive(
    policy: Annotated[
        Path, typer.Option("--policy", exists=True, dir_okay=False, help="The policy file.")
    ],
    tenant: Annotated[
        str | None, typer.Option(callback=identifier, help="Only this tenant's episodes.")
    ] = None,
    principal: Annotated[
        list[str] | None,
        typer.Option(callback=identifier, help="Only these principals (repeat the option)."),
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="Say what would be built; build nothing.")] = False,
    until_caught_up: Annotated[
        bool, typer.Option(help="Exit once the generation has reached the head of the log.")
    ] = False,
    loglevel: Annotated[str, typer.Option(help="Worker log level.")] = "warning",
) -> None:
    """Replay engram.episodes from the start under POLICY into a shadow generation."""
    settings = _with_policy_file(load_settings(), policy)
    formed_under = _policy(settings)
    principals = sorted(set(principal or []))
    if dry_run:
        _plan(settings, formed_under, tenant, principals)
        return
    activation = activation_or_exit(settings, formed_under)
    copy_checked(settings)
    generation = asyncio.run(_prepare(settings, formed_under, tenant, principals))
    run_settings = generation_settings(settings, generation)
    asyncio.run(ensure_topics(run_settings.kafka))
    console.print(
        f"re-deriving into generation {generation.generation_id} "
        f"(policy {formed_under.version}, schema {generation.schema_name})"
    )
    streams = build_app(
        run_settings,
        build_stage(run_settings, formed_under, activation),
        schema=generation.schema_name,
        serves=_serves(generation),
    )
    _add_tasks(streams, run_settings, generation, until_caught_up=until_caught_up)
    run_worker(streams, loglevel=loglevel)


def _with_policy_file(settings: Settings, policy: Path) -> Settings:
    """The settings with ``policy`` in force, and no health server: the live worker's port is
    taken, and this process is a job, not a service."""
    return Settings(
        kafka=settings.kafka,
        database=settings.database,
        model=settings.model,
        formation=settings.formation.model_copy(update={"policy_file": policy}),
        api=settings.api,
        worker=settings.worker.model_copy(update={"http_port": 0}),
        state=settings.state,
    )


def _policy(settings: Settings) -> FormationPolicy:
    try:
        return effective_policy(settings)
    except (PolicyFileError, PromptError) as error:
        refuse(error, "policy refused")
    except ValueError as error:  # a setting the policy cannot take
        err.print(f"[red]policy refused:[/red] {escape(str(error))}")
        raise typer.Exit(2) from None


def _serves(generation: Generation) -> Serves:
    def serves(episode: LogEvent) -> bool:
        return generation.serves(episode.tenant, episode.principal)

    return serves


async def _prepare(
    settings: Settings, policy: FormationPolicy, tenant: str | None, principals: list[str]
) -> Generation:
    """Register (or resume) the generation and create its schema, in one transaction: a
    generation that readers can see always has its tables (``engram generations`` and the lag
    read them as soon as the row is there)."""
    pool = await create_pool(settings.database, role="engram-rederive")
    try:
        async with pool.acquire() as conn, conn.transaction():
            generation = await registry.register_generation(
                conn,
                policy_version=policy.version,
                policy_yaml=render_policy_yaml(policy),
                principals=principals,
                tenant=tenant,
            )
            if generation.status == "live":
                err.print(
                    f"[red]refused:[/red] generation {generation.generation_id} is live already"
                )
                raise typer.Exit(2)
            await create_generation_schema(conn, generation.schema_name)
        await registry.set_status(pool, generation.generation_id, "building")  # until caught up
        return generation
    finally:
        await pool.close()


def _plan(
    settings: Settings, policy: FormationPolicy, tenant: str | None, principals: list[str]
) -> None:
    gid = registry.generation_id(policy.version, principals, tenant)

    async def read() -> tuple[Generation, list[Generation]]:
        pool = await create_pool(settings.database, role="engram-rederive")
        try:
            return await registry.live_generation(pool), await registry.list_generations(pool)
        finally:
            await pool.close()

    live, known = asyncio.run(read())
    existing = next((g for g in known if g.generation_id == gid), None)
    action = "resume" if existing and existing.status != "dropped" else "create"
    scope = f"tenant {tenant or 'all'}, principals {', '.join(principals) or 'all'}"
    console.print(f"would {action} generation {gid} under policy {policy.version} ({scope})")
    console.print(f"live generation: {live.generation_id} (policy {live.policy_version})")
    if live.policy_version == policy.version and not principals and tenant is None:
        console.print("the live generation already forms under this policy")


def _add_tasks(
    streams: EngramStreams, settings: Settings, generation: Generation, *, until_caught_up: bool
) -> None:
    schema = generation.schema_name

    async def project() -> None:
        await project_in_worker(settings, schema=schema)

    async def index() -> None:
        await follow_messages_in_worker(settings, index=True, embed=False, schema=schema)

    async def watch() -> None:
        await watch_progress(settings, generation, until_caught_up=until_caught_up)

    streams.app.task(project)
    streams.app.task(index)
    streams.app.task(watch)


async def watch_progress(
    settings: Settings, generation: Generation, *, until_caught_up: bool
) -> None:
    """Show progress until stopped; mark the generation following once it reaches the head,
    and with ``until_caught_up`` end the process there (SIGTERM to itself: the faust worker
    then shuts down the way Ctrl-C would, committing what it has acknowledged)."""
    pool = await create_pool(settings.database, role="engram-rederive")
    meter = ReplayMeter()
    stopping = False
    try:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            console=err,
            transient=False,
        ) as progress:
            task = progress.add_task(generation.generation_id, total=None, rate="")
            while True:
                lag = await generation_lag(settings.kafka, pool, generation.schema_name)
                progress.update(
                    task,
                    total=lag.head,
                    completed=lag.head - lag.formation,
                    rate=meter.describe(lag),
                )
                if lag.caught_up and not stopping:
                    stopping = await _caught_up(pool, generation, until_caught_up)
                await asyncio.sleep(POLL_S)
    finally:
        await pool.close()


async def _caught_up(pool: asyncpg.Pool, generation: Generation, until_caught_up: bool) -> bool:
    """Mark the generation following; whether this process is now stopping."""
    await registry.set_status(pool, generation.generation_id, "following")
    if until_caught_up:
        console.print(f"generation {generation.generation_id} has reached the head of the log")
        os.kill(os.getpid(), signal.SIGTERM)
    return until_caught_up


class ReplayMeter:
    """Episodes per second since this run started, and the time left at that rate."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._first: int | None = None

    def describe(self, lag: GenerationLag) -> str:
        done = lag.head - lag.formation
        if self._first is None:
            self._first = done
        elapsed = time.monotonic() - self._started
        rate = (done - self._first) / elapsed if elapsed > 0 else 0.0
        eta = f"{lag.formation / rate:.0f}s" if rate > 0 else "?"
        calls, cached = (_counted("miss"), _counted("hit"))
        return (
            f"{rate:.0f} episodes/s, ETA {eta}, {lag.projection} batches to project, "
            f"{calls} model calls, {cached} cached answers"
        )


def _counted(outcome: str) -> int:
    value = REGISTRY.get_sample_value("engram_model_receipts_total", {"outcome": outcome})
    return int(value or 0)
