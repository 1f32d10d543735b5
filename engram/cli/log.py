"""``engram log``: operator commands on the episodic log itself."""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial
from typing import Annotated

import structlog
import typer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError
from rich.console import Console

from engram.cli.failures import refuse
from engram.generations.registry import live_generation
from engram.infra.db import connect, create_pool, retry_while_unavailable
from engram.infra.errors import EngramFailure
from engram.infra.settings import Settings, load_settings
from engram.ingest.log_copies import (
    LogCopy,
    UnfinishedCopy,
    begin_copy,
    finish_copy,
    unfinished_copy,
)
from engram.ingest.log_encryption import (
    CopyProgress,
    LogEncryption,
    forgotten_principals,
    record_pre_encryption_forgetting,
)
from engram.ingest.log_survey import LogSurvey, survey_log
from engram.ingest.topics import FOREVER, source_partitions
from engram.sealing.events import LogSealer
from engram.sealing.opening import open_sealer

log = structlog.get_logger(__name__)

log_app = typer.Typer(
    no_args_is_help=True, help="The episodic log: is it sealed, and encrypting an existing one."
)
out = Console(stderr=True)

NOT_ENCRYPTING = (
    "log encryption is off (ENGRAM_KEYS_ENCRYPT_LOG=false): people's words are appended to the "
    "episodic log in clear, and forgetting a person cannot reach them there (docs/privacy.md)"
)


def log_checked(settings: Settings) -> LogSurvey | None:
    """The start-up check of the log itself: say so when people's words are (or will be) in
    clear there, and name the one path out (``engram log encrypt``). A log that cannot be
    read now is the stage's own start-up to wait out, not this check's."""
    if not settings.keys.encrypt_log:
        out.print(f"[yellow]warning:[/yellow] {NOT_ENCRYPTING}")
        log.warning("log.not_encrypting")
    try:
        survey = asyncio.run(survey_log(settings.kafka))
    except KafkaError as error:
        log.warning("log.survey_failed", error=str(error))
        return None
    advice = survey.advice()
    if advice is not None:
        out.print(f"[yellow]warning:[/yellow] {advice}")
        log.warning("log.plaintext_found", topic=survey.topic, in_clear=survey.in_clear)
    return survey


def copy_checked(settings: Settings) -> None:
    """Refuse to read an episodic log that is a copy ``engram log encrypt`` has not finished:
    it holds only the start of the log, and what formed from it would pass for everything."""

    async def _unfinished() -> LogCopy | None:
        conn = await connect(settings.database)
        try:
            return await unfinished_copy(conn, settings.kafka.episodes_topic)
        finally:
            await conn.close()

    # A database that is not up yet is waited for, as every stage's start does.
    copy = asyncio.run(retry_while_unavailable(_unfinished, what="log.copy_check"))
    if copy is not None:
        refuse(UnfinishedCopy(copy), "not started")


@log_app.command("check")
def check() -> None:
    """Read the ends of the episodic log's partitions and say whether people's words are in
    clear there (exit 3) or sealed (exit 0), and what to do about it; a copy `engram log
    encrypt` has not finished is refused (exit 2)."""
    settings = load_settings()
    copy_checked(settings)
    survey = log_checked(settings)
    if survey is None:
        raise typer.Exit(1)
    out.print(
        f"{survey.topic}: read {survey.read} records at the ends of its partitions: "
        f"{survey.sealed} sealed, {survey.in_clear} in clear"
    )
    if survey.in_clear:
        raise typer.Exit(3)


@log_app.command("encrypt")
def encrypt(
    to: Annotated[str, typer.Option("--to", help="The new, sealed topic (created if missing).")],
    source: Annotated[
        str | None,
        typer.Option("--from", help="The plaintext topic (default: ENGRAM_KAFKA_EPISODES_TOPIC)."),
    ] = None,
) -> None:
    """Copy a plaintext episodic log into a new topic with every person's words sealed under
    their data key (needs ENGRAM_KEYS_KEK), in order, whatever gaps its offsets have (each
    copied record names its source offset). Resumable: run it again after a stop and it goes
    on after the last record copied; exactly once. Until it finishes, `engram worker` and
    `engram rederive` refuse to read the copy. Afterwards point ENGRAM_KAFKA_EPISODES_TOPIC at
    the new topic, re-derive (`engram rederive`), and delete the old topic (docs/privacy.md)."""
    settings = load_settings()
    source_topic = source or settings.kafka.episodes_topic
    if source_topic == to:
        out.print("[red]not copied:[/red] --to must name a new topic, not the one read")
        raise typer.Exit(2)

    async def _run() -> CopyProgress:
        conn = await connect(settings.database)
        try:
            live = await live_generation(conn)
        finally:
            await conn.close()
        pool = await create_pool(settings.database, role="engram-cli", schema=live.schema_name)
        try:
            sealer = await open_sealer(settings.keys.model_copy(update={"encrypt_log": True}), pool)
            assert isinstance(sealer, LogSealer)  # a KEK is required, or open_sealer refused
            forgotten = await forgotten_principals(pool)
            partitions = await source_partitions(settings.kafka.bootstrap, source_topic)
            await begin_copy(pool, source=source_topic, target=to)  # before its first record
            await _create(settings.kafka.bootstrap, to, partitions)
            copy = LogEncryption(
                settings.kafka,
                source=source_topic,
                target=to,
                sealer=sealer,
                forgotten=forgotten,
                on_forgotten_before_encryption=partial(record_pre_encryption_forgetting, pool),
            )
            done = await copy.run(on_progress=_report)
            await finish_copy(pool, target=to, records=done.copied)
            return done
        finally:
            await pool.close()

    try:
        done = asyncio.run(_run())
    except (EngramFailure, LookupError) as failure:
        if isinstance(failure, EngramFailure):
            refuse(failure, "not copied")
        out.print(f"[red]not copied:[/red] {failure}")
        raise typer.Exit(1) from None
    _report(done)
    out.print(f"{source_topic} is copied to {to}, finished")


def _report(progress: CopyProgress) -> None:
    out.print(
        f"through {progress.passed} of {progress.total} source offsets, {progress.copied} "
        f"records in the copy: {progress.sealed} sealed, "
        f"{progress.kept} kept as they were, {progress.forgotten} of forgotten principals "
        f"left unreadable, {progress.invalid} invalid emptied"
        + (
            f"; {progress.over_limit} sealed over ENGRAM_KAFKA_MAX_EVENT_BYTES: raise it "
            "before re-deriving"
            if progress.over_limit
            else ""
        )
    )


async def _create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        with contextlib.suppress(TopicAlreadyExistsError):
            await admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=dict(FOREVER))])
    finally:
        await admin.close()
