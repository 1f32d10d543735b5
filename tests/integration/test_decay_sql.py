"""The read-time decay computed in SQL (``min_confidence`` on a page) answers what
``resolution.decay.Decay.effective`` answers in Python (the confidence a view shows): the two
must agree, or a page would filter on one number and show another."""

import itertools
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from engram.formation.policy import FormationPolicy
from engram.projections.reads.pages import effective_confidence
from engram.resolution.decay import Decay

pytestmark = pytest.mark.integration

NOW = datetime(2026, 6, 1, tzinfo=UTC)
CONFIDENCES = (0.05, 0.1, 0.3, 0.4, 0.45, 0.55, 0.9)
AGES_DAYS = (0.0, 0.5, 13.9, 14.0, 30.0, 90.0, 180.0, 365.0, 2000.0, 700_000.0, -3.0)
"""700,000 days: a belief read ~1,900 years after it was last reinforced (a far ``as_of``), where
0.5 ** (age / half-life) is below what a float8 holds: PostgreSQL raises on that underflow."""
KINDS = (
    ("fact", "lives_in"),
    ("preference", "prefers"),
    ("procedure_pointer", "uses"),
    ("relationship", "knows"),
    ("fact", "has_status"),
    ("fact", "blocked_by"),
    ("unheard_of_type", "works_at"),
)


@pytest.mark.parametrize(
    "decay",
    [
        Decay.of(FormationPolicy()),
        Decay({"fact": 7.0}, 0.2, {}),
        Decay({}, 0.1, {"has_status": 1.0}),
    ],
    ids=["defaults", "one-half-life", "only-expiry"],
)
async def test_sql_and_python_decay_agree(pool: asyncpg.Pool, decay: Decay) -> None:
    rows = [
        (confidence, belief_type, relation, NOW - timedelta(days=age))
        for confidence, (belief_type, relation), age in itertools.product(
            CONFIDENCES, KINDS, AGES_DAYS
        )
    ]
    args: list[object] = []

    def param(value: object) -> str:
        args.append(value)
        return f"${len(args)}"

    expression = effective_confidence(decay, NOW, param)
    values = param([r[0] for r in rows]), param([r[1] for r in rows])
    relations, reinforced = param([r[2] for r in rows]), param([r[3] for r in rows])
    in_sql = await pool.fetch(
        f"SELECT ({expression})::float8 AS effective FROM unnest("
        f"{values[0]}::real[], {values[1]}::text[], {relations}::text[], "
        f"{reinforced}::timestamptz[]) WITH ORDINALITY "
        "AS b(confidence, belief_type, relation, last_reinforced_at, n) ORDER BY n",
        *args,
    )
    for (confidence, belief_type, relation, last), found in zip(rows, in_sql, strict=True):
        expected = decay.effective(
            round(float(confidence), 4),
            belief_type=belief_type,
            relation=relation,
            last_reinforced_at=last,
            now=NOW,
        )
        assert found["effective"] == pytest.approx(expected, abs=1e-4), (
            confidence,
            belief_type,
            relation,
            last,
        )
