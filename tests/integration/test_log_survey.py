"""The start-up check of the log itself: a log that holds people's words in clear says so, and
names `engram log encrypt`; a sealed one does not."""

from __future__ import annotations

import subprocess
import sys

import asyncpg
import pytest

from engram.ingest.log_survey import survey_log
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.sealing.opening import open_sealer
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated

pytestmark = pytest.mark.integration


async def test_words_in_clear_at_either_end_of_the_log_are_found_and_the_way_out_named(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    assert (await survey_log(kafka)).advice() is None  # an empty log

    sealer = await open_sealer(isolated.keys(), pool)
    async with EpisodeProducer(kafka, sealer) as sealed:
        await sealed.publish_many([turn(t, "ana", "p", "I live in Oslo.", seq=i) for i in range(3)])
    survey = await survey_log(kafka, sample=2)
    assert (survey.read, survey.sealed, survey.in_clear) == (3, 3, 0)
    assert survey.advice() is None

    async with EpisodeProducer(kafka) as before_encryption:  # what an old deployment appended
        await before_encryption.publish(turn(t, "ana", "p", "I live in Riga.", seq=9))
    survey = await survey_log(kafka, sample=2)
    assert (survey.read, survey.in_clear) == (4, 1)  # the first two and the last two
    advice = survey.advice()
    assert advice is not None and f"engram log encrypt --to {kafka.episodes_topic}.sealed" in advice

    checked = subprocess.run(
        [sys.executable, "-m", "engram", "log", "check"],
        cwd=REPO,
        env=isolated.env(partitions=1),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 3, checked.stderr
    assert "engram log encrypt" in " ".join(checked.stderr.split())
