"""Any text a caller can send as a search is searched or refused with a reason naming ``q``:
never a database error. Hypothesis drives ``search_beliefs`` against real PostgreSQL."""

from __future__ import annotations

import asyncio
import os

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.projections.reads.search import MAX_QUERY_CHARS, UnsearchableQuery, search_beliefs

pytestmark = pytest.mark.integration

EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "150"))
SYNTAX = st.sampled_from([*"\"'&|!():*<->-\\% \t\n\x00", "or", "and", "not", "<2>", "\ud800"])
QUERIES = st.one_of(
    st.text(max_size=MAX_QUERY_CHARS + 8),
    st.lists(st.one_of(SYNTAX, st.text(max_size=6)), max_size=40).map("".join),
)


async def _search(url: str, query: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await search_beliefs(conn, tenant="t", principal="ana", query=query, limit=5)
    except UnsearchableQuery as refused:
        assert str(refused).startswith("q ")
    finally:
        await conn.close()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=EXAMPLES <= 150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=QUERIES)
def test_any_query_is_searched_or_refused_naming_q(fresh_database: str, query: str) -> None:
    asyncio.run(_search(fresh_database, query))
