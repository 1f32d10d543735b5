"""Statements as a person reads them: "you live in Lisbon", not "speaker lives_in Lisbon".

The stored statement (:func:`formation.core.render_statement`) is the canonical text that
formation hashes, compares and keeps: it names the principal "speaker" and writes the relation
as the vocabulary spells it, and changing it would change what forms (the behaviour digest). What
a person reads is rendered here instead, at read time, from the structured fields: the
principal's name, or "you" when the page is addressed to them, and every relation of the
vocabulary in words, conjugated for the subject. Pure and deterministic: the CLI, the API's
``readable`` fields and the inspector's pages all call it, so they say the same thing.

A refusal keeps only its proposed words (a statement such as "I lives_in Moscow" and the
relation verbatim); :func:`readable_refusal` rewrites the relation and the first-person subject
in them the same way, and leaves any other text — a redaction, a relation outside the
vocabulary — as it was proposed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

SPEAKER = "speaker"
"""How the projection names the principal as a claim end."""

_FIRST_PERSON = frozenset({"i", "me", "myself", "speaker"})
"""A proposal's subject that stands for the principal."""


@dataclass(frozen=True, slots=True)
class Person:
    """Whom a statement is about when it is about the principal: ``name`` for a third party
    reading it (the CLI, the API), or ``None`` for the person themselves ("you")."""

    name: str | None = None

    @property
    def is_you(self) -> bool:
        return self.name is None


YOU = Person()


class Form(Enum):
    """How a relation's words join its subject, which decides how they are conjugated."""

    VERB = "verb"
    """A present verb: "lives in" / "live in"; retracted "no longer lives in"."""
    BE = "be"
    """A state after "is": "is learning" / "are learning"; retracted "is no longer learning"."""
    PAST = "past"
    """Something done: "made" (third and second alike); retracted "did not make"."""
    PASSIVE = "passive"
    """Something that happened to the subject: "was born in" / "were born in"."""
    OWN = "own"
    """A property of the subject: "Ana's name is" / "your name is"."""


@dataclass(frozen=True, slots=True)
class Wording:
    """A relation in words. ``words`` as the third person reads it; ``base`` the plain verb
    where the second person or a negation needs it ("live in", "make")."""

    form: Form
    words: str
    base: str = ""


def _verb(words: str, base: str) -> Wording:
    return Wording(Form.VERB, words, base)


def _be(words: str) -> Wording:
    return Wording(Form.BE, words)


def _past(words: str, base: str) -> Wording:
    return Wording(Form.PAST, words, base)


def _own(words: str) -> Wording:
    return Wording(Form.OWN, words)


WORDING: dict[str, Wording] = {
    "has_name": _own("name"),
    "has_role": _own("role"),
    "works_at": _verb("works at", "work at"),
    "member_of": _be("a member of"),
    "lives_in": _verb("lives in", "live in"),
    "born_in": Wording(Form.PASSIVE, "born in"),
    "speaks": _verb("speaks", "speak"),
    "has_contact": _be("reachable at"),
    "has_timezone": _own("time zone"),
    "prefers": _verb("prefers", "prefer"),
    "dislikes": _verb("dislikes", "dislike"),
    "interested_in": _be("interested in"),
    "knows_about": _verb("knows about", "know about"),
    "uses": _verb("uses", "use"),
    "learning": _be("learning"),
    "intends_to": _verb("intends to", "intend to"),
    "committed_to": _be("committed to"),
    "responsible_for": _be("responsible for"),
    "blocked_by": _be("blocked by"),
    "knows": _verb("knows", "know"),
    "works_with": _verb("works with", "work with"),
    "manages": _verb("manages", "manage"),
    "related_to": _be("related to"),
    "owns": _verb("has", "have"),
    "has_access_to": _verb("has access to", "have access to"),
    "part_of": _be("part of"),
    "instance_of": _be("a kind of"),
    "located_in": _be("located in"),
    "depends_on": _verb("depends on", "depend on"),
    "same_as": _be("the same as"),
    "created": _past("made", "make"),
    "contributed_to": _past("contributed to", "contribute to"),
    "participated_in": _past("took part in", "take part in"),
    "occurred_on": _past("happened on", "happen on"),
    "scheduled_for": _be("scheduled for"),
    "due_on": _be("due on"),
    "has_status": _own("status"),
    "requires": _verb("requires", "require"),
    "prohibits": _verb("rules out", "rule out"),
    "has_condition": _verb("has", "have"),
}
"""Every relation of the vocabulary in words (a test checks none is missing or raw)."""


def relation_words(relation: str) -> str:
    """A relation as a label ("lives in"); one outside the vocabulary with its underscores
    read as spaces."""
    wording = WORDING.get(relation)
    return wording.words if wording else relation.replace("_", " ")


@dataclass(frozen=True, slots=True)
class _Subject:
    """The subject as it will be written: its words, its possessive, and whether it takes the
    second person's verb."""

    who: str
    whose: str
    second: bool


def _subject_of(text: str, is_principal: bool, person: Person) -> _Subject:
    if not is_principal:
        return _Subject(text, _possessive(text), second=False)
    if person.name is None:
        return _Subject("you", "your", second=True)
    return _Subject(person.name, _possessive(person.name), second=False)


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _predicate(wording: Wording, subject: _Subject, retracted: bool) -> str:
    """The words after the subject: conjugated for it, negated when retracted."""
    match wording.form:
        case Form.VERB:
            verb = wording.base if subject.second else wording.words
            return f"no longer {verb}" if retracted else verb
        case Form.BE:
            be = "are" if subject.second else "is"
            return f"{be} no longer {wording.words}" if retracted else f"{be} {wording.words}"
        case Form.PASSIVE:
            was = "were" if subject.second else "was"
            return f"{was} not {wording.words}" if retracted else f"{was} {wording.words}"
        case Form.PAST:
            return f"did not {wording.base}" if retracted else wording.words
        case Form.OWN:
            return "is no longer" if retracted else "is"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] if text.startswith(("you", "your")) else text


def kept_as_history(status: str, valid_to: object | None) -> bool:
    """A current belief with an end: a state that held and has ended, read "used to"."""
    return status in ("active", "provisional") and valid_to is not None


def readable_statement(
    *,
    subject: str,
    subject_is_principal: bool,
    relation: str,
    obj: str,
    facet: str | None,
    retracted: bool,
    person: Person,
    ended: bool = False,
) -> str:
    """One belief as a sentence: "You live in Lisbon", "ana's name is Ana Lima", "Your sister
    is Maria" (a family relation's facet names it). ``obj`` "speaker" is the principal too. A
    state that has ended (``ended``: a belief kept as history) "used to" hold: "You used to
    live in Oslo"."""
    who = _subject_of(subject, subject_is_principal, person)
    what = _object_of(obj, person)
    wording = WORDING.get(relation)
    if ended and not retracted and wording is not None and wording.form in _STATES:
        about = f" (about {facet})" if facet else ""
        return _sentence(f"{_used_to(wording, who, what)}{about}")
    if relation == "related_to" and facet:
        return _sentence(_relative(who, what, facet, retracted))
    if wording is None:
        words = relation.replace("_", " ")
        text = (
            f"{who.who}: {'no longer ' if retracted else ''}{words} {what}"  # no verb to conjugate
        )
    elif wording.form is Form.OWN:
        text = f"{who.whose} {wording.words} {_predicate(wording, who, retracted)} {what}"
    else:
        text = f"{who.who} {_predicate(wording, who, retracted)} {what}"
    about = f" (about {facet})" if facet else ""
    return _sentence(f"{text}{about}")


_STATES = frozenset({Form.VERB, Form.BE, Form.OWN})
"""The forms of a state, which can have held and ended (events happened: "made", "was born")."""


def _used_to(wording: Wording, who: _Subject, what: str) -> str:
    """A state that held and ended: "used to live in", "used to be learning", "Ana's role used
    to be"."""
    match wording.form:
        case Form.VERB:
            return f"{who.who} used to {wording.base} {what}"
        case Form.BE:
            return f"{who.who} used to be {wording.words} {what}"
        case _:
            return f"{who.whose} {wording.words} used to be {what}"


_STATE_OF: dict[str, tuple[str, str]] = {
    "spouse": ("married", "married"),
    "fiancé": ("engaged", "engaged"),
    "fiancée": ("engaged", "engaged"),
    "child": ("a parent", "a parent"),
}
"""Kin told without a name that say what the subject is: "you are married", not "your spouse
is spouse"."""
_LATE = re.compile(r"^late (?P<kin>.+?)(?: \((?P<when>[^)]*)\))?$")


def _relative(who: _Subject, what: str, facet: str, retracted: bool) -> str:
    """A family or personal relation, one belief per person: "Your sister is Marta" with the
    name, "You have a husband" or "You are married" before any name is told (the kin word is
    the object then, not a name), "Your father has died (2023)" for a late relative."""
    late = _LATE.match(facet)
    if late is not None:
        kin, when = late.group("kin"), late.group("when")
        named = "" if what.lower() == kin.lower() else f" {what}"
        dated = f" ({when})" if when else ""
        return f"{who.whose} {kin}{named} has died{dated}"
    if what.lower() != facet.lower():
        return f"{who.whose} {facet} {'is no longer' if retracted else 'is'} {what}"
    be = "are" if who.second else "is"
    if facet in _STATE_OF:
        return f"{who.who} {be} {'no longer ' if retracted else ''}{_STATE_OF[facet][0]}"
    have = "have" if who.second else "has"
    article = "an" if facet[:1] in "aeiou" else "a"
    if retracted:
        return f"{who.who} no longer {'have' if who.second else 'has'} {article} {facet}"
    return f"{who.who} {have} {article} {facet}"


def _object_of(obj: str, person: Person) -> str:
    if obj.strip().lower() not in _FIRST_PERSON:
        return obj
    return "you" if person.is_you else str(person.name)


def readable_refusal(statement: str, relation: str, person: Person) -> str:
    """A refused proposal's words as a sentence where they can be read as one: "I lives_in
    Moscow" → "You live in Moscow". Words the proposal wrote itself, a redaction, or a statement
    that does not name its relation are returned as they are: a refusal keeps its words."""
    parts = re.split(rf"\s+{re.escape(relation)}\s+", statement.strip(), maxsplit=1)
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return statement
    subject, obj = parts
    return readable_statement(
        subject=subject,
        subject_is_principal=subject.lower() in _FIRST_PERSON,
        relation=relation,
        obj=obj,
        facet=None,
        retracted=False,
        person=person,
    )
