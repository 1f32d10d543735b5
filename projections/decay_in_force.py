"""The decay a reader applies: the policy of the generation it reads.

Half-lives, floor and expiries are part of the formation policy, so the generation's own
policy (its ``policy_yaml`` in the registry) decides how its beliefs fade; a generation
registered without one (the first live one) uses the defaults. Parsed once per distinct text.
"""

from __future__ import annotations

from functools import lru_cache

import asyncpg

from formation.policy import FormationPolicy
from policies.document import parse_policy
from resolution.decay import Decay

_POLICY_OF_READ_SCHEMA = (
    "SELECT policy_yaml FROM public.generation WHERE schema_name = current_schema()"
)


async def decay_in_force(conn: asyncpg.Connection | asyncpg.Pool) -> Decay:
    return _decay(await conn.fetchval(_POLICY_OF_READ_SCHEMA))


@lru_cache(maxsize=16)
def _decay(policy_yaml: str | None) -> Decay:
    if policy_yaml is None:
        return Decay.of(FormationPolicy())
    document = parse_policy(policy_yaml.encode(), source="the generation registry")
    return Decay.of(document.policy(behaviour_digest=None, prompt_digest=None))
