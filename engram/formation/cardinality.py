"""Which claims hold one value at a time, and which many: decided here, for both arms.

* A relation the vocabulary marks single-valued (``has_name``, ``has_role``, ``lives_in``,
  ``born_in``, ``has_timezone``, ``instance_of``, ``located_in``, ``occurred_on``,
  ``scheduled_for``, ``due_on``, ``has_status``) holds one value per subject and facet: a new
  value replaces the old one.
* A preference (``prefers``, ``dislikes``, ``interested_in``) holds one value per facet only
  when the facet names a *choice*, of which one is made at a time: one of
  :data:`CHOICE_FACETS` (an editor, an interface theme, an indentation style, measurement
  units, a date format, an answer style, a communication channel, an operating system, a
  programming language, a beverage, a meeting time — the pattern arm's closed map), or the
  pattern arm's ``topic:<object>`` key. Any other facet is a *category* that many values
  share ("hobby": reading, films, walks; "book": every book the principal likes): a list under
  it is many beliefs, none replacing another, and a later taste leaves the earlier ones.
* Everything else holds many values.
* A state kept as history (told in the past) is never single-valued: it replaces nothing.

The extraction prompt tells the model the same (``prompts/extraction.yaml``, ``relations``).
"""

from __future__ import annotations

from engram.formation.deterministic.facets import FACET_KEYWORDS
from engram.formation.vocabulary import Relation

CHOICE_FACETS: frozenset[str] = frozenset(name for name, _ in FACET_KEYWORDS)
"""Preference facets that name one choice at a time."""

TOPIC_PREFIX = "topic:"


def choice_facet(facet: str | None) -> bool:
    """A facet of which one value holds at a time (for a preference)."""
    if facet is None:
        return False
    return facet in CHOICE_FACETS or facet.startswith(TOPIC_PREFIX)


def single_valued(relation: Relation, facet: str | None, *, past_state: bool = False) -> bool:
    """Whether a claim of ``relation`` under ``facet`` holds one value at a time."""
    if past_state:
        return False
    if relation.cardinality == "single":
        return True
    return relation.belief_type == "preference" and choice_facet(facet)
