"""Memory stays bounded under a steady load: a short soak (bench/soak.py) whose worker and
projector end the load window within 10% of the resident memory they had after warm-up.

The bound is a ratio of medians within the same run (the second quarter of the load against
the last), so a slower or busier machine moves both alike, and a median ignores the single
samples an allocator's steps produce. At 20 turns/s, the two windows' midpoints are ~45 s
(~900 turns) apart: a process keeping ~8 KB or more per turn (an episode, its claims batch, a
future) would show as ~9% of its ~80 MiB. Smaller per-turn leaks need the 15-minute soak
(``make soak``), whose slope per thousand turns docs/reliability.md records.
"""

from __future__ import annotations

import json

import pytest

from bench.soak import soak

pytestmark = pytest.mark.faults

BOUND = 1.10


async def test_a_short_soak_keeps_the_worker_and_projector_memory_bounded() -> None:
    result = await soak(minutes=1.5, rate=20.0, sample_s=1.0)
    print(json.dumps({k: v for k, v in result.items() if k != "series"}))
    assert result["exited"] == {}, "a process exited during the soak"
    latency = result["latency"]
    assert isinstance(latency, dict) and latency["unformed_at_deadline"] == 0
    memory = result["memory"]
    assert isinstance(memory, dict) and set(memory) == {"worker", "projector"}
    for name, figures in memory.items():
        assert figures["late_over_early"] <= BOUND, f"{name}: {figures}"
