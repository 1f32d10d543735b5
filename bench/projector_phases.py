"""Where a projector chunk's wall time goes: its phases, the event loop's idle share, and what
PostgreSQL's backends wait on meanwhile.

Instruments the real projector for the length of a ``with`` block, as
:mod:`bench.statement_timing` does asyncpg (nothing faked):

* each chunk's phases, from the caller's side: ``load`` (the rows resolution consults),
  ``resolve`` (pure, in memory), ``keep`` (the claims history), ``write`` (the set-based
  statements), and ``chunk`` (the whole transaction);
* ``decode``: the follower decoding what a fetch brought (the projector's decoder);
* the time the event loop spent blocked in its selector: the projector's one thread with
  nothing to do, every lane waiting on PostgreSQL or Kafka.

:func:`sample_waits` polls ``pg_stat_activity`` for the backends of one database: whether each
is on CPU or waiting, and on what (``Client:ClientRead`` inside a transaction is a backend
waiting for the projector's next statement). Polling takes CPU from the run it watches, so its
rates are lower than an unwatched run's; read its shares, not its rates.

    .venv/bin/python -m bench.projector --turns 3000 --phases
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import selectors
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg

import engram.projections.beliefs.applying as applying
import engram.projections.beliefs.canonical as canonical
import engram.projections.beliefs.projector as projector
import engram.projections.beliefs.store as belief_store


@dataclass
class PhaseTally:
    """Seconds and calls of each phase, and the selector's blocked time, while instrumented."""

    seconds: dict[str, float] = field(default_factory=lambda: collections.defaultdict(float))
    calls: dict[str, int] = field(default_factory=lambda: collections.defaultdict(int))
    loop_idle_s: float = 0.0

    def add(self, phase: str, started: float) -> None:
        self.seconds[phase] += time.perf_counter() - started
        self.calls[phase] += 1

    def report(self, wall_s: float) -> dict[str, object]:
        return {
            "loop_idle_share": round(self.loop_idle_s / wall_s, 3) if wall_s else None,
            "phases": {
                phase: {"calls": self.calls[phase], "ms_per_call": round(1000 * s / n, 2)}
                for phase, s in sorted(self.seconds.items())
                if (n := self.calls[phase])
            },
        }


def _timed_async(tally: PhaseTally, phase: str, function: Any) -> Any:
    async def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await function(*args, **kwargs)
        finally:
            tally.add(phase, started)

    return timed


def _timed_sync(tally: PhaseTally, phase: str, function: Any) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            tally.add(phase, started)

    return timed


@contextlib.contextmanager
def timed_phases() -> Iterator[PhaseTally]:
    """Tally the projector's phases and the running loop's blocked time while the block runs
    (enter it inside the event loop the projector will run on)."""
    tally = PhaseTally()
    # Each phase is a name its caller's module looks up (the stages of the canonical pass, the
    # store's write, the sink's chunk): replaced there, read and set by name.
    phases = (
        (canonical, "load_state", "load", _timed_async),
        (canonical, "resolve_chunk", "resolve", _timed_sync),
        (canonical, "keep_batches", "keep", _timed_async),
        (belief_store, "write_changes", "write", _timed_async),
        (applying, "project_records", "chunk", _timed_async),
    )
    patched: list[tuple[object, str, object]] = [
        (module, name, getattr(module, name)) for module, name, _, _ in phases
    ]
    patched.append((projector.BeliefProjector, "_decode", projector.BeliefProjector._decode))
    for module, name, phase, timed in phases:
        setattr(module, name, timed(tally, phase, getattr(module, name)))
    projector.BeliefProjector._decode = _timed_sync(  # type: ignore[method-assign]
        tally, "decode", projector.BeliefProjector._decode
    )
    loop_selector: selectors.BaseSelector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
    select = loop_selector.select

    def blocked(timeout: float | None = None) -> list[Any]:
        started = time.perf_counter()
        try:
            return select(timeout)
        finally:
            tally.loop_idle_s += time.perf_counter() - started

    loop_selector.select = blocked  # type: ignore[method-assign]
    try:
        yield tally
    finally:
        loop_selector.select = select  # type: ignore[method-assign]
        for owner, name, original in patched:
            setattr(owner, name, original)


async def sample_waits(
    db_url: str, stop: asyncio.Event, *, every_s: float = 0.005
) -> collections.Counter[str]:
    """Samples of every other backend of ``db_url``'s database until ``stop``: ``state`` and
    ``wait_event_type:wait_event`` (``CPU`` when it waits on nothing)."""
    seen: collections.Counter[str] = collections.Counter()
    conn = await asyncpg.connect(db_url)
    try:
        while not stop.is_set():
            rows = await conn.fetch(
                "SELECT state, coalesce(wait_event_type || ':' || wait_event, 'CPU') AS waiting "
                "FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state IS NOT NULL"
            )
            seen.update(f"{r['state']} / {r['waiting']}" for r in rows)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=every_s)
    finally:
        await conn.close()
    return seen


def wait_shares(seen: collections.Counter[str]) -> dict[str, float]:
    """Each state's share of the samples taken inside a transaction (``active`` or ``idle in
    transaction``): idle pooled connections are left out."""
    inside = {k: n for k, n in seen.items() if not k.startswith("idle /")}
    total = sum(inside.values()) or 1
    return {k: round(n / total, 3) for k, n in sorted(inside.items(), key=lambda kv: -kv[1])}


async def with_phases(
    measure: Callable[[], Awaitable[Any]], db_url: str
) -> tuple[Any, dict[str, object]]:
    """Run ``measure`` (a projector run) instrumented, and report its phases and the waits of
    its database's backends."""
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_waits(db_url, stop))
    started = time.perf_counter()
    try:
        with timed_phases() as tally:
            result = await measure()
    finally:
        stop.set()
        waits = await sampler
    wall = time.perf_counter() - started
    return result, {
        **tally.report(wall),
        "backend_waits_in_transaction": wait_shares(waits),
    }
