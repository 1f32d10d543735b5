"""The decay a reader applies: the policy of the generation it reads.

Half-lives, floor and expiries are part of the formation policy, so the generation's own
policy (its ``policy_yaml`` in the registry) decides how its beliefs fade; a generation
registered without one (the first live one) uses the defaults. Read through
:func:`policies.in_force.pinned_policy`, as corrections read it: parsed once per distinct text.
"""

from __future__ import annotations

from functools import lru_cache

import asyncpg

from engram.policies.in_force import pinned_policy
from engram.resolution.decay import Decay

_POLICY_OF_READ_SCHEMA = (
    "SELECT policy_yaml FROM public.generation WHERE schema_name = current_schema()"
)


async def decay_in_force(conn: asyncpg.Connection | asyncpg.Pool) -> Decay:
    return _decay(await conn.fetchval(_POLICY_OF_READ_SCHEMA))


@lru_cache(maxsize=16)
def _decay(policy_yaml: str | None) -> Decay:
    return Decay.of(pinned_policy(policy_yaml))
