"""Phrases the life-event patterns share: adverbs before a verb, time and clause tails, plans.

Kept apart so events, activities and belongings cut their objects the same way.
"""

from __future__ import annotations

import re

from engram.formation.screening import screened

ADVERBS = (
    r"(?:(?:just|finally|recently|also|actually|even|once|officially|definitely|really|still)\s+)*"
)
CLAUSE_TAIL = re.compile(
    r"\s+(?:to|for|with|about|because|where|which|that|who|and|but|so|when|while|after|before"
    r"|since|during|as)\s.*$",
    re.IGNORECASE,
)
_TIME_WORDS = (
    r"yesterday|today|tonight|last\s+\w+|last\s+night|this\s+(?:morning|afternoon|week|weekend|month"
    r"|year|spring|summer|fall|autumn|winter)|(?:(?:about|almost|nearly|around|over)\s+)?(?:a few|a couple of|several|\w+)\s+(?:days?|weeks?"
    r"|months?|years?)\s+ago|recently|lately|these days|nowadays|now|again|in\s+(?:january|february"
    r"|march|april|may|june|july|august|september|october|november|december|spring|summer"
    r"|autumn|fall|winter|\d{4})|on weekends|on \w+days|every \w+"
    r"|on (?:mon|tues|wednes|thurs|fri|satur|sun)day|together)"
)
TIME_TAIL = re.compile(r"\s+(?:" + _TIME_WORDS + r"\b.*$", re.IGNORECASE)
TIME_PHRASE = re.compile(r"\s+(?:" + _TIME_WORDS + r"\b", re.IGNORECASE)
PLANNED = screened(
    r"\b(?:gonna|going to|will|'ll|plan\w*|want\w*|hop\w+|someday|start\w*|open\w*"
    r"|buy\w*|get|getting|save|saving|need|looking for|search\w*)\b",
    re.IGNORECASE,
)
"""``ADVERBS`` may stand between "I" and the verb; ``TIME_TAIL`` and ``CLAUSE_TAIL`` end an
object before a time phrase or a new clause (``TIME_PHRASE`` is the time phrase alone);
``PLANNED`` marks a clause about the future or a wish, where a possession or a trip has not
happened."""
