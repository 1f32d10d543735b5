"""Cutting claim ends out of clause text: object phrases, coordinated lists and names."""

from __future__ import annotations

import re

_TAIL_WORDS = (
    r"(?:because|since|but|though|although|which|who|when|whenever|while|so|if|unless"
    r"|until|now|anymore|any more|these days|nowadays|at the moment|right now|currently|too"
    r"|as well|either|for now|lately|today|yesterday|tomorrow|last|next|this (?:year|month|week)"
    r"|every|each|most of the time|from now on|thanks|thank you|please|already|again"
    r"|for (?:the )?(?:last|past)|for \d|for (?:a|many|several|two|three|four|five|ten|a few)"
    r" (?:years?|months?|weeks?|days?)|over|rather than|instead of|instead|than|whereas|named|called|better|more|a lot"
    r"|so much|very much|in (?:all|every|any|most)|on (?:all|every|any|most))\b"
)
_TAIL = re.compile(
    r"(?:\s+" + _TAIL_WORDS + r"|\s+-\s|\s*[,;:()!?\"\u201c\u201d]).*$", re.IGNORECASE | re.DOTALL
)
_LIST_TAIL = re.compile(
    r"(?:\s+" + _TAIL_WORDS + r"|\s+-\s|\s*[;:()!?\"\u201c\u201d]).*$", re.IGNORECASE | re.DOTALL
)
_STARTS_TAIL = re.compile(_TAIL_WORDS, re.IGNORECASE)
_LEADING = re.compile(r"^(?:(?:a|an|the|my|our|his|her|their|some|another)\s+)+", re.IGNORECASE)
_TRAILING = re.compile(r"[\s.,!?;:'\"\u201d\u2019)]+$")
_ITEM_SEP = re.compile(r"\s*,\s*(?:and\s+|&\s+)?|\s+(?:and|&|as well as|plus)\s+", re.IGNORECASE)
_CLOSING_CONJUNCTION = re.compile(r",[^,]*\s(?:and|&|as well as|plus)\s[^,]*$", re.IGNORECASE)
_ANAPHORIC = re.compile(r"(?:their|his|her|its)\s", re.IGNORECASE)
_GERUND = re.compile(r"^[a-z]+ing\b", re.IGNORECASE)
_NAME_WORD = re.compile(r"[^\W\d_][\w'\u2019.-]*")
_NOT_NAMES = frozenset({"I", "I'm", "I\u2019m", "I've", "I'd", "I'll", "The", "And", "But", "My"})


def cut_phrase(text: str) -> str:
    """The phrase at the start of ``text``, cut before a clause-level tail word."""
    return _TRAILING.sub("", _TAIL.sub("", text.strip())).strip()


def strip_determiners(text: str) -> str:
    return _LEADING.sub("", text.strip()).strip()


def object_phrase(text: str) -> str:
    """One object: cut before its tail, with leading articles and possessives removed."""
    return strip_determiners(cut_phrase(text))


def object_list(text: str) -> list[str]:
    """Coordinated objects ("a watch and a car", "Portuguese, German") as separate items."""
    listed = _TRAILING.sub("", _LIST_TAIL.sub("", text.strip())).strip()
    pieces = _ITEM_SEP.split(listed)
    if "," in listed and not _CLOSING_CONJUNCTION.search(listed):
        pieces = pieces[:1]
    items: list[str] = []
    for raw in pieces:
        if _STARTS_TAIL.match(raw) or raw.lower().startswith(("which", "who", "that")):
            break
        if items and _ANAPHORIC.match(raw):
            continue  # "veterans and their rights": "rights" alone is not what was meant
        item = strip_determiners(raw)
        if item:
            items.append(item)
    return parallel_items(items)


def parallel_items(items: list[str]) -> list[str]:
    """A list led by an activity ("improving education and infrastructure") is a list of
    activities: a bare noun after it is the first activity's object, not an item."""
    if not items or not _GERUND.match(items[0]) or len(items[0].split()) < 2:
        return items
    return [items[0]] + [item for item in items[1:] if _GERUND.match(item)]


def leading_name(text: str, *, limit: int = 4) -> str | None:
    """The capitalised name at the start of ``text`` ("Anna", "Ana Lima"), if there is one."""
    words: list[str] = []
    for raw in text.strip().split(" "):
        word = raw.rstrip(".,!?;:'\u2019)\"")
        if not word[:1].isupper() or word in _NOT_NAMES or not _NAME_WORD.fullmatch(word):
            break
        words.append(word)
        if word != raw or len(words) >= limit:
            break
    return " ".join(words) or None


def name_list(text: str) -> list[str]:
    """Names coordinated with "and" or commas ("Tom and Eva")."""
    names: list[str] = []
    for item in _ITEM_SEP.split(text.strip()):
        name = leading_name(item)
        if name is None:
            break
        names.append(name)
        if len(name) < len(item.strip().rstrip(".,!?;:")):
            break
    return names
