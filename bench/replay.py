"""Re-derivation throughput, against a raw consume of the same topic in the same run.

Publishes N synthetic turns (the ones ``bench/throughput.py`` uses) to a fresh episodes topic
and database, then measures:
  raw     — the topic consumed with aiokafka and written with asyncpg COPY, no formation;
  replay  — ``engram rederive --policy FILE --until-caught-up`` into a new generation: episodes/s
            from its first committed run until every episode is projected in the generation's
            schema (steady state), and over the whole command (group join and shutdown included).
Prints JSON. Machines are noisy: read the ratio.

    .venv/bin/python -m bench.replay [--turns 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
import orjson

from bench.throughput import (
    REPO,
    cpu_seconds,
    env_for,
    fresh,
    measure_raw,
    sealer_for,
    synthetic_turns,
)
from engram.infra.settings import load_settings
from engram.ingest.producer import EpisodeProducer
from engram.keys.kek import new_kek_text


async def generation_runs(conn: asyncpg.Connection) -> int:
    schema = await conn.fetchval(
        "SELECT schema_name FROM generation WHERE generation_id <> 'public' LIMIT 1"
    )
    if schema is None:
        return 0
    try:
        return int(await conn.fetchval(f'SELECT count(*) FROM "{schema}".consolidation_run'))
    except asyncpg.UndefinedTableError:
        return 0


async def measure_replay(env: dict[str, str], db_url: str, count: int) -> dict[str, float]:
    """Run the replay as a real process and watch the generation's schema fill."""
    policy = Path(tempfile.mkdtemp()) / "policy.yaml"
    policy.write_text("{}\n")
    argv = [sys.executable, "-m", "engram", "rederive", "--policy", str(policy)]
    conn = await asyncpg.connect(db_url)
    started = time.perf_counter()
    log = (REPO / ".dev" / f"bench-replay-{secrets.token_hex(3)}.log").open("wb")
    process = subprocess.Popen(
        [*argv, "--until-caught-up"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    first: float | None = None
    first_runs, first_cpu, done_cpu = 0, 0.0, 0.0
    try:
        while (runs := await generation_runs(conn)) < count:
            if first is None and runs > 0:
                first, first_runs, first_cpu = time.perf_counter(), runs, cpu_seconds(process.pid)
            if process.poll() is not None:
                raise RuntimeError(f"rederive exited early ({process.returncode}); see {log.name}")
            await asyncio.sleep(0.05)
        done, done_cpu = time.perf_counter(), cpu_seconds(process.pid)
        process.wait(timeout=120)
        ended = time.perf_counter()
    finally:
        if process.poll() is None:
            process.kill()
        await conn.close()
    steady = done - (first or started)
    return {
        "replay_steady_per_s": round(count / steady, 1),
        # The command's CPU (user + system) an episode over the same stretch: other load on
        # the machine moves it far less than the rate.
        "replay_steady_cpu_us_per_episode": round(
            1e6 * (done_cpu - first_cpu) / max(1, count - first_runs), 1
        ),
        "replay_command_per_s": round(count / (ended - started), 1),
        "replay_command_s": round(ended - started, 1),
    }


async def main(count: int) -> dict[str, object]:
    settings = load_settings()
    admin_url = settings.database.url.get_secret_value()
    run = "replay" + secrets.token_hex(3)
    kafka, db_url = await fresh(settings.kafka, admin_url, run)
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(synthetic_turns(count, tenant=run))
    raw = await measure_raw(kafka, db_url, count)
    replay = await measure_replay(env_for(kafka, db_url), db_url, count)
    return {
        "turns": count,
        "raw_aiokafka_copy_per_s": round(raw, 1),
        **replay,
        "replay_over_raw": round(replay["replay_steady_per_s"] / raw, 4),
    }


async def encryption_pairs(count: int, pairs: int) -> dict[str, object]:
    """Re-derivation of a plaintext log and of the same turns sealed (log encryption on),
    alternated ``pairs`` times in one run, each from its own topic and database: the ratio
    sealed/plain is what opening every turn (and sealing every claims batch) costs a replay.
    Which goes first alternates (as in ``bench/throughput.py``), and the replay's CPU an
    episode is reported beside its rate, with the ratio plain/sealed of each."""
    settings = load_settings()
    admin_url = settings.database.url.get_secret_value()
    run = "replayenc" + secrets.token_hex(3)
    turns = synthetic_turns(count, tenant=run)
    kek = new_kek_text()
    plain, sealed, ratios, plain_cpu, sealed_cpu, cpu_ratios = [], [], [], [], [], []
    for pair in range(pairs):
        kafka_p, db_p = await fresh(settings.kafka, admin_url, f"{run}p{pair}")
        async with EpisodeProducer(kafka_p) as producer:
            await producer.publish_many(turns)
        kafka_s, db_s = await fresh(settings.kafka, admin_url, f"{run}s{pair}")
        pool, sealer = await sealer_for(db_s, kek)
        try:
            async with EpisodeProducer(kafka_s, sealer) as producer:
                await producer.publish_many(turns)
        finally:
            await pool.close()
        keys = {"ENGRAM_KEYS_KEK": kek, "ENGRAM_KEYS_ENCRYPT_LOG": "true"}
        if pair % 2 == 0:
            off = await measure_replay(env_for(kafka_p, db_p), db_p, count)
            on = await measure_replay(env_for(kafka_s, db_s) | keys, db_s, count)
        else:
            on = await measure_replay(env_for(kafka_s, db_s) | keys, db_s, count)
            off = await measure_replay(env_for(kafka_p, db_p), db_p, count)
        plain.append(off["replay_steady_per_s"])
        sealed.append(on["replay_steady_per_s"])
        ratios.append(round(on["replay_steady_per_s"] / off["replay_steady_per_s"], 3))
        off_cpu = off["replay_steady_cpu_us_per_episode"]
        on_cpu = on["replay_steady_cpu_us_per_episode"]
        plain_cpu.append(off_cpu)
        sealed_cpu.append(on_cpu)
        cpu_ratios.append(round(off_cpu / on_cpu, 3))
    return {
        "turns": count,
        "pairs": pairs,
        "replay_plain_steady_per_s": plain,
        "replay_sealed_steady_per_s": sealed,
        "sealed_over_plain": ratios,
        "sealed_over_plain_median": statistics.median(ratios),
        "replay_cpu_us_per_episode_plain": plain_cpu,
        "replay_cpu_us_per_episode_sealed": sealed_cpu,
        "plain_cpu_over_sealed_cpu": cpu_ratios,
        "plain_cpu_over_sealed_cpu_median": statistics.median(cpu_ratios),
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument(
        "--encryption-pairs",
        type=int,
        default=0,
        help="Only measure replay with log encryption off and on, alternated this often.",
    )
    args = parser.parse_args()
    result = asyncio.run(
        encryption_pairs(args.turns, args.encryption_pairs)
        if args.encryption_pairs
        else main(args.turns)
    )
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
