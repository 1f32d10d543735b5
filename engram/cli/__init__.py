"""The ``engram`` command line: one entry point for producers, workers, operators and readers."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated

import structlog
import typer
import uvicorn
from rich.markup import escape

from engram.cli.activation import activation_or_exit
from engram.cli.agents import mcp
from engram.cli.audit import runs_app, sessions_app, user_model
from engram.cli.beliefs import beliefs_app, refusals_app
from engram.cli.embeddings import embeddings_app
from engram.cli.erasures import erasures_app
from engram.cli.evaluation import add_eval
from engram.cli.extract import extract_lines
from engram.cli.failures import refuse
from engram.cli.generations import generations_app
from engram.cli.keys import keys_app
from engram.cli.log import copy_checked, log_app, log_checked
from engram.cli.operations import digest, dlq_app, formation_app, freshness
from engram.cli.output import appending, console, err
from engram.cli.policy import policy_app
from engram.cli.principals import principals_app
from engram.cli.recall import recall_command
from engram.cli.rederive import rederive
from engram.cli.search import beliefs_search
from engram.cli.tokens import tokens_app
from engram.cli.unreachable import UNREACHABLE, explain
from engram.cli.webhooks import webhooks_app
from engram.formation.policy import FormationPolicy
from engram.generations.registry import Generation, PolicyChanged, pin_policy
from engram.generations.runtime import generation_settings
from engram.infra.child import keep_child
from engram.infra.db import connect, create_pool, retry_while_unavailable
from engram.infra.errors import EngramFailure
from engram.infra.health import run_stage_alone
from engram.infra.logs import configure_logging
from engram.infra.settings import Settings, load_settings
from engram.ingest.inbox import InboxIntake, InboxIntakeFenced
from engram.ingest.jsonl import InvalidEpisodeLine, load_episodes
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.keys.kek import kek_configured
from engram.policies.document import render_policy_yaml
from engram.policies.in_force import effective_policy
from engram.projections.migrate import MigrationError
from engram.projections.migrate import migrate as run_migrations
from engram.projections.runner import (
    embeds_in_a_child,
    follow_messages_in_worker,
    message_followers,
    notify_in_worker,
    project_in_worker,
    run_messages,
    run_notifier,
    run_projector,
)
from engram.schemas.api import LogPosition
from engram.schemas.export import JSON_DIR, export_json_schemas
from engram.sealing.events import NoKeys, Sealer
from engram.sealing.opening import open_sealer
from engram.streams.app import build_app, run_worker
from engram.streams.wiring import build_stage
from engram.watermarks.waiting import FormationTimeout, wait_for_watermarks

OPENAPI_PATH = JSON_DIR.parent / "openapi.json"
app = typer.Typer(no_args_is_help=True, help="Engram: memory formation for AI agents.")
schemas_app = typer.Typer(no_args_is_help=True, help="The event and HTTP contracts.")
beliefs_app.command("search")(beliefs_search)
app.add_typer(beliefs_app, name="beliefs")
app.add_typer(refusals_app, name="refusals")
app.add_typer(runs_app, name="runs")
app.add_typer(sessions_app, name="sessions")
app.command("user-model")(user_model)
app.command("recall")(recall_command)
app.add_typer(schemas_app, name="schemas")
app.add_typer(principals_app, name="principals")
app.add_typer(tokens_app, name="tokens")
app.add_typer(keys_app, name="keys")
app.add_typer(log_app, name="log")
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(erasures_app, name="erasures")


def _settings() -> Settings:
    return load_settings()


@app.callback()
def _root(loglevel: Annotated[str, typer.Option(help="Log level.")] = "warning") -> None:
    configure_logging(loglevel)


@app.command()
def migrate() -> None:
    """Apply pending SQL migrations (idempotent; refuses edited ones)."""

    async def _run() -> list[str]:
        conn = await connect(_settings().database)
        try:
            return [f"{m.version:04d}_{m.name}" for m in await run_migrations(conn)]
        finally:
            await conn.close()

    try:
        applied = asyncio.run(_run())
    except MigrationError as error:
        refuse(error, "migration refused")
    console.print(
        f"applied {len(applied)} migration(s)" + (f": {', '.join(applied)}" if applied else "")
    )


@app.command()
def topics() -> None:
    """Create Engram's Kafka topics if missing (explicit partitions, log kept forever)."""
    asyncio.run(ensure_topics(_settings().kafka))
    console.print("topics ready")


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSON-lines episodes.")],
    wait: Annotated[bool, typer.Option(help="Wait until every episode has formed.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.")] = 120.0,
) -> None:
    """Publish episodes from a JSON-lines file to the episodic log."""
    settings = _settings()
    try:
        episodes = load_episodes(path, max_bytes=settings.kafka.max_event_bytes)
    except InvalidEpisodeLine as error:
        err.print(f"[red]not ingested:[/red] {escape(str(error))}; nothing was appended")
        raise typer.Exit(2) from None

    async def _run() -> None:
        await ensure_topics(settings.kafka)
        async with (
            _sealer_of(settings) as sealer,
            EpisodeProducer(settings.kafka, sealer) as producer,
        ):
            with appending(len(episodes)) as advance:
                appended = await producer.publish_many(episodes, on_appended=advance)
        console.print(f"appended {len(appended)} episode(s) to {settings.kafka.episodes_topic}")
        if wait:
            await _wait(appended, timeout)
            console.print(f"formed through every appended episode ({len(appended)})")

    async def _wait(positions: list[LogPosition], timeout_s: float) -> None:
        pool = await create_pool(settings.database, role="engram-cli")
        try:
            await wait_for_watermarks(pool, positions, timeout_s=timeout_s)
        except FormationTimeout as error:
            refuse(error)
        finally:
            await pool.close()

    asyncio.run(_run())


@asynccontextmanager
async def _sealer_of(settings: Settings) -> AsyncIterator[Sealer]:
    """The command's sealer (the keys' start-up check first); a pool only when keys are set."""
    if not kek_configured(settings.keys) and not settings.keys.encrypt_log:
        yield NoKeys()
        return
    pool = await create_pool(settings.database, role="engram-cli")
    try:
        yield await open_sealer(settings.keys, pool)
    finally:
        await pool.close()


def _keys_checked(settings: Settings) -> None:
    """A missing, malformed or wrong key-encryption key stops a stage before it starts."""

    async def _check() -> None:
        async with _sealer_of(settings):
            pass

    try:
        asyncio.run(retry_while_unavailable(_check, what="keys.check"))
    except EngramFailure as failure:
        refuse(failure, "not started")


def _embedder_child(settings: Settings) -> Callable[[], Awaitable[None]]:
    """A task of ``engram worker``'s loop: ``engram embedder`` as a child process, niced
    (``ENGRAM_EMBEDDING_NICE``), started and stopped with the worker. The worker's /health port
    is the worker's: the child serves none."""
    argv = [sys.executable, "-m", "engram", "embedder", "--nice", str(settings.embedding.nice)]
    env = {**os.environ, "ENGRAM_WORKER_HTTP_PORT": "0"}

    async def embedder_child() -> None:
        await keep_child(argv, env=env, name="embedder")

    return embedder_child


def _following_messages(
    settings: Settings, *, index: bool, embed: bool, schema: str | None
) -> Callable[[], Awaitable[None]]:
    """A task of ``engram worker``'s loop: a follower of the log's messages for the index, the
    vectors or both."""

    async def follow_messages() -> None:
        await follow_messages_in_worker(settings, index=index, embed=embed, schema=schema)

    return follow_messages


@app.command()
def worker(
    projector: Annotated[bool, typer.Option(help="Also run the belief projector.")] = True,
    indexer: Annotated[
        bool, typer.Option(help="Also keep the message index (what recall searches).")
    ] = True,
    embedder: Annotated[
        bool,
        typer.Option(
            help="Also keep the message vectors (recall's semantic list); with the index, "
            "behind one follower of the log."
        ),
    ] = True,
    inbox: Annotated[
        bool,
        typer.Option(
            help="Also move the inbox topic's plaintext turns into the log (one process per "
            "consumer group: a second one takes over and the first stops)."
        ),
    ] = False,
    notifier: Annotated[
        bool,
        typer.Option(
            help="Also run the notifier (signed webhooks to the endpoints projects register; "
            "needs a KEK: ENGRAM_KEYS_KEK or ENGRAM_KEYS_KEK_FILE)."
        ),
    ] = True,
    loglevel: Annotated[str, typer.Option(help="Worker log level.")] = "warning",
) -> None:
    """Run the formation agent (faust), the belief projector, the message index and vectors
    (one follower of the log for both when the embedder keeps the index's pace, else one
    each) and the notifier until interrupted."""
    configure_logging(loglevel)
    policy = effective_policy(_settings())
    activation = activation_or_exit(_settings(), policy)
    generation = _live_generation(_settings(), policy)
    settings = generation_settings(_settings(), generation)
    schema = generation.schema_name
    _keys_checked(settings)
    copy_checked(settings)
    asyncio.run(ensure_topics(settings.kafka))
    log_checked(settings)
    streams = build_app(settings, build_stage(settings, policy, activation), schema=schema)
    if projector:

        async def project() -> None:
            await project_in_worker(settings, schema=schema)

        streams.app.task(project)
    # The index and the vectors: one follower for both when the embedder keeps the index's
    # pace (one fetch and one opening of each record), else one each (runner.message_followers);
    # the contextual model's vectors in a child process of their own (runner.embeds_in_a_child).
    for index, embed in message_followers(settings, index=indexer, embed=embedder):
        streams.app.task(_following_messages(settings, index=index, embed=embed, schema=schema))
    if embeds_in_a_child(settings, embed=embedder):
        streams.app.task(_embedder_child(settings))
    if notifier and not kek_configured(settings.keys):
        structlog.get_logger("engram.worker").info(
            "notifier.off",
            why="no ENGRAM_KEYS_KEK nor ENGRAM_KEYS_KEK_FILE: no webhook secret can be read "
            "to sign with",
        )
    elif notifier:

        async def notify() -> None:
            await notify_in_worker(settings, schema=schema)

        streams.app.task(notify)
    if inbox:

        async def move_inbox() -> None:
            async with _sealer_of(settings) as sealer:
                await InboxIntake(settings.kafka, sealer.seal).run()

        streams.app.task(move_inbox)
    run_worker(streams, loglevel=loglevel)


def _live_generation(settings: Settings, policy: FormationPolicy) -> Generation:
    """The live generation, refusing to start when its policy is not this worker's."""

    async def _pin() -> Generation:
        conn = await connect(settings.database)
        try:
            return await pin_policy(conn, policy.version, render_policy_yaml(policy))
        finally:
            await conn.close()

    try:
        # A database that is not up yet is waited for, as formation and projection do.
        return asyncio.run(retry_while_unavailable(_pin, what="worker.generation"))
    except PolicyChanged as error:
        refuse(error, "not started")


@app.command()
def projector() -> None:
    """Run only the belief projector (claims into PostgreSQL) until interrupted.

    Pair it with `engram worker --no-projector` to give formation and projection a process each.
    It serves /health, /ready and /metrics like the worker (ENGRAM_WORKER_HTTP_*).
    """
    generation = _live_generation(_settings(), effective_policy(_settings()))
    settings = generation_settings(_settings(), generation)
    asyncio.run(ensure_topics(settings.kafka))
    asyncio.run(run_projector(settings, schema=generation.schema_name))


@app.command()
def indexer() -> None:
    """Run only the message indexer (the log's messages into PostgreSQL, what recall searches)
    until interrupted.

    Pair it with `engram worker --no-indexer` to give the index a process of its own. It serves
    /health, /ready and /metrics like the worker (ENGRAM_WORKER_HTTP_*).
    """
    generation = _live_generation(_settings(), effective_policy(_settings()))
    settings = generation_settings(_settings(), generation)
    asyncio.run(ensure_topics(settings.kafka))
    asyncio.run(run_messages(settings, index=True, embed=False, schema=generation.schema_name))


@app.command("embedder")
def embedder_command(
    nice: Annotated[
        int, typer.Option(min=0, max=19, help="Lower this process's CPU priority by this much.")
    ] = 0,
) -> None:
    """Run only the embedding follower (the log's messages into the configured embedding
    generation: recall's semantic list) until interrupted.

    `engram worker` starts one as its child by default (the contextual model); with
    `engram worker --no-embedder` run it yourself, anywhere. It serves /health, /ready and
    /metrics like the worker (ENGRAM_WORKER_HTTP_*).
    """
    if nice:
        os.nice(nice)
    generation = _live_generation(_settings(), effective_policy(_settings()))
    settings = generation_settings(_settings(), generation)
    asyncio.run(ensure_topics(settings.kafka))
    asyncio.run(run_messages(settings, index=False, embed=True, schema=generation.schema_name))


@app.command("notifier")
def notifier_command() -> None:
    """Run only the notifier until interrupted: it follows the memory events into the
    deliveries each registered webhook endpoint is owed, and sends them, signed (any number of
    notifiers may run: each delivery is claimed by one).

    Pair it with `engram worker --no-notifier`. It serves /health, /ready and /metrics like the
    worker (ENGRAM_WORKER_HTTP_*).
    """
    generation = _live_generation(_settings(), effective_policy(_settings()))
    settings = generation_settings(_settings(), generation)
    _keys_checked(settings)
    asyncio.run(ensure_topics(settings.kafka))
    try:
        asyncio.run(run_notifier(settings, schema=generation.schema_name))
    except EngramFailure as failure:
        refuse(failure, "not started")


@app.command("inbox")
def inbox_command() -> None:
    """Move plaintext turns from the inbox topic (ENGRAM_KAFKA_INBOX_TOPIC) into the episodic
    log until interrupted: validated like every door, encrypted when log encryption is on,
    appended exactly once (one Kafka transaction with the inbox offsets), then deleted from
    the inbox. Refused records are dead-lettered with the reason, without their bytes.

    For producers that write to Kafka themselves; run one per consumer group. It serves
    /health, /ready and /metrics like the worker (ENGRAM_WORKER_HTTP_*).
    """
    settings = _settings()
    _keys_checked(settings)
    asyncio.run(ensure_topics(settings.kafka))
    worker_http = settings.worker

    async def _run() -> None:
        async with _sealer_of(settings) as sealer:
            intake = InboxIntake(settings.kafka, sealer.seal)
            await run_stage_alone(intake, host=worker_http.http_host, port=worker_http.http_port)

    try:
        asyncio.run(_run())
    except InboxIntakeFenced as error:
        refuse(error, "stopped")


@app.command()
def api(
    host: Annotated[str | None, typer.Option(help="Bind address (default loopback).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (0: any free one).")] = None,
    dev: Annotated[
        bool, typer.Option("--dev", help="Serve without tokens, on loopback only.")
    ] = False,
    loglevel: Annotated[str, typer.Option(help="API log level.")] = "info",
) -> None:
    """Serve the HTTP API (FastAPI). Every request needs a token from `engram tokens create`,
    unless --dev (or ENGRAM_API_DEV_MODE) serves a loopback address without them."""
    # Lazy: FastAPI costs ~0.5 s at import, which only this command should pay.
    from engram.api import DevModeRefused, create_api

    configure_logging(loglevel)
    settings = _settings()
    bind = host or settings.api.host
    settings.api = settings.api.model_copy(
        update={"host": bind, "dev_mode": dev or settings.api.dev_mode}
    )
    try:
        served = create_api(settings)
    except DevModeRefused as error:
        refuse(error, "refused")
    _keys_checked(settings)  # a missing or wrong key-encryption key stops it here, not mid-start
    listening = _listen(bind, settings.api.port if port is None else port)
    url = _url(bind, listening.getsockname()[1])
    structlog.get_logger("engram.api").info("api.serving", url=url, dev_mode=settings.api.dev_mode)
    if settings.api.dev_mode:
        err.print(
            f"[yellow]development mode: serving the API WITHOUT tokens on {url} (loopback "
            "only); never expose this[/yellow]",
            soft_wrap=True,
        )
    else:
        err.print(
            f"serving the API on {url}: every request needs a bearer token (engram tokens create)",
            soft_wrap=True,
            highlight=False,
        )
    config = uvicorn.Config(served, host=bind, port=listening.getsockname()[1], log_level="warning")
    uvicorn.Server(config).run(sockets=[listening])


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (port 0: any free one), before anything is announced;
    a bind that fails exits 2 saying what to change."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
    except OSError as error:
        listening.close()
        err.print(
            f"[red]cannot serve on {escape(host)}:{port}:[/red] {error.strerror or error}; "
            "choose another with --host/--port (ENGRAM_API_HOST, ENGRAM_API_PORT)"
        )
        raise typer.Exit(2) from None
    listening.set_inheritable(True)
    return listening


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@app.command()
def extract() -> None:
    """Read turns as JSON lines on stdin; print candidates and refusals as JSON lines.

    The pure formation core from the command line: no services needed.
    """
    code = extract_lines(sys.stdin.buffer, sys.stdout, sys.stderr)
    raise typer.Exit(code)


@schemas_app.command("export")
def schemas_export(
    check: Annotated[bool, typer.Option(help="Fail if the files on disk are out of date.")] = False,
) -> None:
    """Write the JSON Schema of every episode event to schemas/json/ and the API's OpenAPI
    document to schemas/openapi.json."""
    stale = export_json_schemas(check=check)
    if not export_openapi(check=check):
        stale.append(OPENAPI_PATH.name)
    if check and stale:
        err.print(f"[red]out of date:[/red] {', '.join(stale)}; run `engram schemas export`")
        raise typer.Exit(1)
    console.print("schemas up to date" if check else "schemas written")


def export_openapi(*, check: bool) -> bool:
    """Write (or with ``check``, compare) schemas/openapi.json; True when it was current."""
    # Lazy, as in `engram api`: only this command pays for importing FastAPI.
    from engram.api import render_openapi

    text = render_openapi()
    current = OPENAPI_PATH.exists() and OPENAPI_PATH.read_text(encoding="utf-8") == text
    if not current and not check:
        OPENAPI_PATH.write_text(text, encoding="utf-8")
    return current


app.command()(freshness)
app.command()(mcp)
app.command()(digest)
app.command()(rederive)
app.add_typer(generations_app, name="generations")
app.add_typer(embeddings_app, name="embeddings")
app.add_typer(formation_app, name="formation")
app.add_typer(dlq_app, name="dlq")
app.add_typer(policy_app, name="policy")
add_eval(app)


def main() -> None:
    try:
        app()
    except UNREACHABLE as error:
        err.print(f"[red]engram:[/red] {escape(explain(error, load_settings()))}")
        raise SystemExit(1) from None
    except EngramFailure as failure:  # one a command did not answer itself
        refuse(failure, "engram")
