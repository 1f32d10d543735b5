"""A spaCy dependency-parse candidate path, measured against the patterns and not adopted.

Issue 12 asked whether a real parser buys precision and recall on real conversation. These
rules read a parsed sentence the way the patterns read a clause: a verb whose subject is the
speaker ("I", a conjoined verb of it, or a sentence that starts with a past or -ing verb and
dropped its "I"), no negation, modal or conditional, then the verb's lemma picks the relation
(have/own/buy/adopt → owns, love/like/enjoy → prefers, be passionate about → interested_in,
work as/at → has_role/works_at, teach, learn, play, join a club, live in / move to, start or
take up an activity, make a work, take part in an event, plan a trip or a venture) and the
object is the noun phrase of the verb's object (compounds and non-evaluative modifiers, "X of
Y", "trip to <place>"). Every finding then goes through the deterministic arm's own precision
gate (``formation.deterministic.ends.judge``). ``bench/spacy_recall.py`` runs it; the numbers
and the decision are in docs/formation-quality.md. Not part of the product: spaCy is not a
dependency of Engram.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from engram.formation.deterministic.dates import ground
from engram.formation.deterministic.ends import words
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.lexicon import LANGUAGE_NAMES
from engram.formation.deterministic.nouns import (
    ACTIVITY_HEADS,
    CREATIONS,
    EVENT_HEADS,
    HOBBY_GERUNDS,
    SPORTS,
    TAUGHT_SUBJECTS,
    VAGUE_EVENTS,
)

Tok = Any
LANGUAGES = frozenset(LANGUAGE_NAMES)

EVALUATIVE = frozenset(
    [
        "amazing",
        "awesome",
        "great",
        "good",
        "nice",
        "cool",
        "little",
        "big",
        "beautiful",
        "wonderful",
        "fantastic",
        "incredible",
        "lovely",
        "fun",
        "favorite",
        "favourite",
        "best",
        "whole",
        "huge",
        "special",
        "first",
        "real",
        "super",
        "perfect",
        "delicious",
        "cute",
        "gorgeous",
        "stunning",
        "fabulous",
        "adorable",
        "new",
        "old",
        "other",
        "same",
        "own",
        "last",
        "next",
        "short",
        "long",
        "quick",
        "brief",
        "small",
    ]
)
MODALS = frozenset(["would", "could", "might", "may", "should", "can", "must"])
FUTURE = frozenset(["will", "'ll", "wo", "shall"])
GROUP_HEADS = frozenset(
    [
        "club",
        "group",
        "team",
        "band",
        "choir",
        "league",
        "society",
        "association",
        "gym",
        "orchestra",
        "crew",
        "troupe",
        "committee",
        "council",
        "circle",
        "guild",
    ]
)
OWN_VERBS = frozenset(["have", "own", "buy", "get", "adopt"])
PREFER_VERBS = frozenset(["love", "like", "enjoy", "adore"])
EVENT_VERBS = frozenset(
    [
        "go",
        "attend",
        "visit",
        "run",
        "do",
        "complete",
        "take",
        "volunteer",
        "participate",
        "compete",
        "host",
        "organize",
        "organise",
        "perform",
        "win",
        "enter",
        "join",
    ]
)
CREATE_VERBS = frozenset(
    [
        "write",
        "paint",
        "make",
        "bake",
        "build",
        "create",
        "finish",
        "publish",
        "record",
        "knit",
        "draw",
    ]
)
LEARNABLE = TAUGHT_SUBJECTS | ACTIVITY_HEADS | HOBBY_GERUNDS | SPORTS | {"instrument"}
LEARN_VERBS = frozenset(["learn", "study"])
START_VERBS = frozenset(["start", "begin"])


def _phrase(tok: Tok) -> str:
    """The noun phrase a head names: compounds and non-evaluative modifiers, plus "X of Y"."""
    kept: list[Tok] = []
    for child in tok.lefts:
        if child.dep_ in {"compound", "nmod"} or (
            child.dep_ == "amod" and child.lower_ not in EVALUATIVE
        ):
            kept.extend(t for t in child.subtree if t.dep_ not in {"det", "poss", "punct"})
    text = " ".join([*(t.text for t in sorted(kept, key=lambda t: t.i)), tok.text])
    for child in tok.rights:
        if child.dep_ == "prep" and child.lower_ in {"of", "to"}:
            objs = [c for c in child.children if c.dep_ == "pobj"]
            if objs and (child.lower_ == "of" or objs[0].pos_ == "PROPN"):
                text += f" {child.text} {_phrase(objs[0])}"
        if child.dep_ == "compound":
            text += f" {child.text}"
    return text


def _det(tok: Tok) -> set[str]:
    return {c.lower_ for c in tok.children if c.dep_ in {"det", "poss", "predet"}}


POINTING = frozenset(
    ["this", "that", "these", "those", "your", "their", "his", "her", "its", "our"]
)


def _subject_i(verb: Tok) -> bool:
    subs = [c for c in verb.children if c.dep_ in {"nsubj", "nsubjpass"}]
    if subs:
        return bool(subs[0].lower_ == "i")
    if verb.dep_ == "conj" and verb.head.pos_ in {"VERB", "AUX"}:
        return _subject_i(verb.head)
    if verb.dep_ == "xcomp":
        if verb.head.lemma_ == "use" or (
            verb.tag_ == "VB" and verb.head.lemma_ not in {"plan", "go", "want"}
        ):
            return False
        return _subject_i(verb.head)
    # a fragment: the sentence starts with this verb (past or gerund), nothing before but adverbs
    if verb.dep_ == "ROOT" and verb.tag_ in {"VBD", "VBG", "VBN"}:
        before = [t for t in verb.sent if t.i < verb.i]
        return all(t.pos_ in {"ADV", "INTJ", "PUNCT"} for t in before)
    return False


def _mood_ok(verb: Tok) -> bool:
    if any(c.dep_ == "neg" for c in verb.children):
        return False
    if any(c.dep_ == "aux" and c.lower_ in MODALS for c in verb.children):
        return False
    if any(c.dep_ == "mark" and c.lower_ in {"if", "unless", "whether"} for c in verb.children):
        return False
    if verb.sent.text.rstrip().endswith("?"):
        return False
    return verb.dep_ not in {"advcl", "ccomp", "csubj", "acl"} or verb.dep_ == "ccomp"


def _future(verb: Tok) -> bool:
    aux = {c.lower_ for c in verb.children if c.dep_ == "aux"}
    if aux & FUTURE:
        return True
    head = verb.head
    return bool(verb.dep_ == "xcomp" and head.lemma_ == "go" and head.tag_ == "VBG")


def _tense(verb: Tok) -> str:
    aux = {c.lemma_ for c in verb.children if c.dep_ == "aux"}
    if verb.tag_ == "VBD" or (verb.tag_ == "VBN" and "have" in aux):
        return "past"
    return "present"


def _objects(verb: Tok) -> list[Tok]:
    return [c for c in verb.children if c.dep_ in {"dobj", "attr", "oprd"}]


def _preps(verb: Tok, *names: str) -> list[Tok]:
    found: list[Tok] = []
    for c in verb.children:
        if c.dep_ == "prep" and c.lower_ in names:
            found.extend(p for p in c.children if p.dep_ == "pobj")
    return found


def _gerund(verb: Tok) -> Tok | None:
    for c in verb.children:
        if c.dep_ in {"xcomp", "dobj"} and c.tag_ == "VBG":
            return c
    return None


def _gerund_phrase(ger: Tok) -> str:
    objs = [c for c in ger.children if c.dep_ in {"dobj", "prt"}]
    return " ".join([ger.lower_, *(_phrase(o) if o.dep_ == "dobj" else o.text for o in objs[:1])])


def _event_ok(text: str) -> bool:
    found = words(text)
    return (
        bool(found)
        and found[-1] in EVENT_HEADS
        and not (len(found) == 1 and found[0] in VAGUE_EVENTS)
    )


def _dated(event: Finding, text: str, occurred_on: date | None) -> list[Finding]:
    when = ground(text, occurred_on)
    if when is None or len(words(event.object)) < 2:
        return [event]
    return [event, Finding(event.object, "occurred_on", when, tense="past")]


@dataclass(frozen=True)
class Verb:
    """A verb whose subject is the speaker, with what the rules ask of it."""

    tok: Tok
    lemma: str
    tense: str
    sent: str
    obj: Tok | None
    ger: Tok | None
    occurred_on: date | None


def read_verb(verb: Tok, occurred_on: date | None) -> list[Finding]:
    lemma = verb.lemma_.lower()
    objs = _objects(verb)
    v = Verb(
        verb,
        lemma,
        _tense(verb),
        verb.sent.text,
        objs[0] if objs else None,
        _gerund(verb),
        occurred_on,
    )
    if _future(verb) or lemma == "plan":
        return _plan(verb, lemma)
    if v.obj is not None and _det(v.obj) & POINTING:
        return []
    if lemma in {"take", "pick"} and _prt(verb, "up"):
        return _started(v)
    handler = _HANDLERS.get(lemma)
    return handler(v) if handler is not None else []


def _owns(v: Verb) -> list[Finding]:
    if v.obj is None or v.obj.pos_ not in {"NOUN", "PROPN"}:
        return []
    if v.lemma == "have" and (v.tense != "present" or v.tok.tag_ == "VBG"):
        return []
    if v.lemma == "get" and v.tense != "past":
        return []
    return [Finding("I", "owns", _phrase(v.obj), tense="present", confidence=0.4)]


def _prefers(v: Verb) -> list[Finding]:
    if v.tense != "present":
        return []
    if v.ger is not None:
        ger_objs = [c for c in v.ger.children if c.dep_ == "dobj"]
        if v.ger.lower_ in HOBBY_GERUNDS and not ger_objs:
            return [Finding("I", "prefers", v.ger.lower_, confidence=0.4)]
        if ger_objs and not _det(ger_objs[0]) & (POINTING | {"my", "the"}):
            return [Finding("I", "prefers", _gerund_phrase(v.ger), confidence=0.4)]
        return []
    obj = v.obj
    if obj is not None and obj.pos_ in {"NOUN", "PROPN"} and not _det(obj) & {"my", "the"}:
        return [Finding("I", "prefers", _phrase(obj), confidence=0.4)]
    return []


def _works(v: Verb) -> list[Finding]:
    roles = _preps(v.tok, "as")
    if roles:
        return [Finding("I", "has_role", _phrase(roles[0]), tense=v.tense)]
    places = [p for p in _preps(v.tok, "at", "for") if p.pos_ == "PROPN"]
    if places and v.tense == "present":
        return [Finding("I", "works_at", _phrase(places[0]))]
    return []


def _teaches(v: Verb) -> list[Finding]:
    if v.obj is None or v.tense != "present":
        return []
    if v.obj.lower_ in TAUGHT_SUBJECTS | ACTIVITY_HEADS | SPORTS:
        return [Finding("I", "has_role", f"{_phrase(v.obj).lower()} teacher")]
    return []


def _learns(v: Verb) -> list[Finding]:
    if v.obj is None or v.tense != "present":
        return []
    if v.obj.lower_ in LEARNABLE or v.obj.lower_.capitalize() in LANGUAGES:
        return [Finding("I", "learning", v.obj.text)]
    return []


def _plays(v: Verb) -> list[Finding]:
    if v.obj is not None and v.obj.lower_ in SPORTS and v.tense == "present":
        return [Finding("I", "participated_in", v.obj.lower_, tense="present")]
    return []


def _joins(v: Verb) -> list[Finding]:
    if v.obj is not None and v.obj.lower_ in GROUP_HEADS:
        return [Finding("I", "member_of", _phrase(v.obj))]
    return _events(v)


def _lives(v: Verb) -> list[Finding]:
    if v.tense != "present":
        return []
    places = [p for p in _preps(v.tok, "in") if p.ent_type_ in {"GPE", "LOC"}]
    return [Finding("I", "lives_in", _phrase(places[0]))] if places else []


def _moves(v: Verb) -> list[Finding]:
    if v.tense != "past":
        return []
    places = [p for p in _preps(v.tok, "to") if p.ent_type_ in {"GPE", "LOC"}]
    return [Finding("I", "lives_in", _phrase(places[0]), tense="present")] if places else []


def _started(v: Verb) -> list[Finding]:
    if v.ger is not None and v.ger.lower_ in HOBBY_GERUNDS:
        return [Finding("I", "learning", v.ger.lower_)]
    if v.obj is not None and v.obj.lower_ in ACTIVITY_HEADS | HOBBY_GERUNDS:
        return [Finding("I", "learning", _phrase(v.obj))]
    return []


def _creates(v: Verb) -> list[Finding]:
    if v.obj is None or v.tense != "past" or v.obj.lower_ not in CREATIONS:
        return []
    return _dated(Finding("I", "created", _phrase(v.obj), tense="past"), v.sent, v.occurred_on)


def _events(v: Verb) -> list[Finding]:
    if v.tense != "past":
        return []
    return _event(v.tok, v.lemma, v.obj, v.ger, v.sent, v.occurred_on)


def _copula_of(v: Verb) -> list[Finding]:
    return _copula(v.tok)


_HANDLERS: dict[str, Callable[[Verb], list[Finding]]] = {
    **dict.fromkeys(OWN_VERBS, _owns),
    **dict.fromkeys(PREFER_VERBS, _prefers),
    **dict.fromkeys(LEARN_VERBS, _learns),
    **dict.fromkeys(START_VERBS, _started),
    **dict.fromkeys(CREATE_VERBS, _creates),
    **dict.fromkeys(EVENT_VERBS, _events),
    "be": _copula_of,
    "work": _works,
    "teach": _teaches,
    "play": _plays,
    "join": _joins,
    "live": _lives,
    "move": _moves,
}


def _prt(verb: Tok, word: str) -> bool:
    return any(c.dep_ == "prt" and c.lower_ == word for c in verb.children)


def _event(
    verb: Tok, lemma: str, obj: Tok | None, ger: Tok | None, sent: str, occurred_on: date | None
) -> list[Finding]:
    if lemma == "go" and ger is not None and ger.lower_ in HOBBY_GERUNDS | {"horseback"}:
        return _dated(
            Finding("I", "participated_in", _gerund_phrase(ger), tense="past"), sent, occurred_on
        )
    targets = [obj] if obj is not None else []
    targets += _preps(verb, "to", "in", "at", "on", "for")
    for target in targets:
        text = _phrase(target)
        if _event_ok(text.split(" to ")[0]):
            return _dated(Finding("I", "participated_in", text, tense="past"), sent, occurred_on)
        if target.lower_ in {"trip", "vacation", "holiday"}:
            places = [p for p in _preps(verb, "to") if p.ent_type_ in {"GPE", "LOC"}]
            if places:
                return _dated(
                    Finding("I", "participated_in", f"trip to {_phrase(places[0])}", tense="past"),
                    sent,
                    occurred_on,
                )
        if lemma in {"go", "visit"} and target.ent_type_ in {"GPE", "LOC"}:
            return _dated(
                Finding("I", "participated_in", f"trip to {text}", tense="past"), sent, occurred_on
            )
    return []


def _plan(verb: Tok, lemma: str) -> list[Finding]:
    if lemma == "plan":
        obj = _objects(verb)
        if obj and _event_ok(_phrase(obj[0]).split(" to ")[0]):
            return [Finding("I", "intends_to", f"go on {_phrase(obj[0])}", confidence=0.4)]
        xc = [c for c in verb.children if c.dep_ == "xcomp" and c.pos_ == "VERB"]
        if xc:
            return _plan_phrase(xc[0])
        return []
    if lemma in {"open", "start", "adopt", "buy", "move", "visit", "run", "publish", "write"}:
        return _plan_phrase(verb)
    return []


def _plan_phrase(verb: Tok) -> list[Finding]:
    objs = _objects(verb)
    if objs and objs[0].pos_ in {"NOUN", "PROPN"}:
        det = [c.lower_ for c in objs[0].children if c.dep_ in {"det", "poss"}]
        lead = f"{det[0]} " if det and det[0] in {"a", "an", "my"} else ""
        return [
            Finding("I", "intends_to", f"{verb.lemma_} {lead}{_phrase(objs[0])}", confidence=0.4)
        ]
    return []


def _copula(verb: Tok) -> list[Finding]:
    for c in verb.children:
        if c.dep_ == "acomp" and c.lower_ in {"passionate", "interested", "obsessed", "into"}:
            for p in c.children:
                if p.dep_ == "prep":
                    objs = [o for o in p.children if o.dep_ == "pobj"]
                    if objs:
                        return [Finding("I", "interested_in", _phrase(objs[0]).lower())]
        if c.dep_ == "attr" and c.lower_ == "fan":
            objs = [o for o in _preps(c, "of") if not _det(o) & POINTING]
            if objs:
                return [Finding("I", "interested_in", _phrase(objs[0]))]
        if c.dep_ == "attr" and c.lower_ in {"allergic"}:
            return []
    return []


def _preps_of(tok: Tok, name: str) -> list[Tok]:
    return _preps(tok, name)


def read_doc(doc: Any, occurred_on: date | None) -> list[tuple[Finding, Any]]:
    """Every finding, with the sentence it came from."""
    found: list[tuple[Finding, Any]] = []
    for sent in doc.sents:
        for tok in sent:
            if tok.pos_ not in {"VERB", "AUX"}:
                continue
            if not _subject_i(tok) or not _mood_ok(tok):
                continue
            for finding in read_verb(tok, occurred_on):
                found.append((finding, sent))
    return found
