"""Whether a finding's ends are well formed: the precision gate of the deterministic arm.

Patterns cut ends out of clause text, and on real conversation that text is often not a thing
at all: a pronoun ("uses it"), a placeholder ("something exciting"), a quantifier ("owns lots"),
a clause ("prefers this series is one of my favorites"), a verb phrase, a feeling ("owns
love"), or a fragment cut mid-phrase ("prefers making it a"). A wrong belief does harm and a
missed one does not, so a finding whose ends do not read as a noun phrase or a name is dropped
here, before it becomes a proposal. Two more rules hold the ends to their meaning:

* ``owns`` needs something ownable: a concrete possession from a closed list, or a name
  ("Tesla", "Fujifilm X-T4");
* "we" is the project only when the clause is about the project's work: a decision, a rule, a
  tool, a status. "We love camping" is a household, not a project, and forms nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.formation.deterministic.facets import preference_facet
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import ABSTRACT_NOUNS, OWNABLE_HEADS, PLACEHOLDERS, closed
from engram.formation.proposals import is_project_term, is_speaker_term

VERB_PHRASE_RELATIONS = frozenset({"committed_to", "prohibits", "requires", "intends_to"})
"""Relations whose object is a verb phrase as written ("ship on Mondays")."""

CLOSED_OBJECT_RELATIONS = frozenset({"has_status", "has_timezone", "occurred_on"})
"""Relations whose object comes from a closed list or a grammar of its own ("on hold", "UTC+2",
"2023-05-06"), not cut from free text: only the subject is checked."""

PROJECT_RELATIONS = frozenset(
    {"committed_to", "prohibits", "requires", "intends_to", "uses", "depends_on", "has_status"}
)
"""What "we" may state for the project: its decisions, rules, tools and the state of its work."""

_FUNCTION_EDGE = frozenset(
    {
        "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "to", "of", "and",
        "or", "with", "for", "in", "on", "at", "into", "from", "by", "about", "as", "up", "so",
        "than", "that", "this", "what", "how", "some", "any", "all", "few", "out", "off",
        "both", "either", "neither", "but", "nor",
    }
)  # fmt: skip
_CLAUSE_WORDS = frozenset(
    {
        "i", "i'm", "i've", "i'd", "i'll", "me", "you", "you're", "we", "we're", "we've", "us",
        "he", "she", "they", "them", "it", "it's", "is", "are", "was", "were", "am", "be",
        "been", "has", "have", "had", "do", "does", "did", "can", "could", "will", "would",
        "should", "got", "gets", "reminds", "makes", "takes", "looks", "feels", "that's",
        "there", "here", "what", "how", "who", "which", "when", "where", "why", "because",
        "everywhere", "somewhere", "anywhere", "together", "each", "other", "like", "even",
    }
)  # fmt: skip
_TASTE_RELATIONS = frozenset({"prefers", "dislikes", "interested_in", "learning", "uses"})
_LEADING_VERBS = closed(
    "get go make take do be have see lost got gone made taken done seen keep let just really"
    " also actually even still always"
)
_DEICTIC = closed("this that these those")
_BARE_VERBS = closed(
    "wait go try help see know stay start stop begin keep leave move come give take make do get"
    " going doing getting making having being trying helping seeing waiting using taking giving"
    " keeping staying coming working learning playing sharing pushing watching talking creating"
    " growing"
)
"""A verb on its own names no taste: "I prefer to wait" prefers nothing, "I like going" neither."""
_DANGLING_END = closed("new more different better other same own else again too most less")
"""A modifier left without its noun ends a fragment ("making new"), not a thing liked."""
_PREPOSITIONS = closed("in into with by on at up to about")
_DEGREE = closed("pretty very really so quite super too kinda rather fairly extremely totally")
_JUDGEMENTS = closed(
    "stressful busy hard tough fun great boring demanding exhausting rewarding crazy hectic"
    " intense amazing awesome ok okay fine good bad tiring easy difficult nice cool"
)
"""What "my job is …" says of the job, not which job it is: "my job is pretty stressful"."""
_SPEAKER_OBJECTS = frozenset({"manages", "works_with", "knows", "related_to"})
_PERSONS = closed(
    "him her hers his them their theirs it its you your yours me us myself yourself himself"
    " herself itself themselves ourselves yourselves"
)
"""Someone or something another sentence names: "making him happy", "her music", "seeing it
grow" are no taste a person can be asked about ("prefers making him happy": who?)."""
_DATE_SUFFIX = re.compile(r" \(\d{4}(?:-W\d{2}|-\d{2}(?:-\d{2})?)?\)$")
_GERUND = re.compile(r"[a-z-]+ing", re.IGNORECASE)
_ING_NOUNS = closed(
    "building wedding meeting painting drawing ceiling evening morning offering setting listing"
    " wiring landing clothing housing training funding thing king string spring ring"
)
"""Words ending in -ing that name a thing with a status ("the building", "the training")."""
_WORD = re.compile(r"[\w'\u2019-]+")
_DASH_TAIL = re.compile(r"\s*[-\u2013\u2014]+\s+|\s+[-\u2013\u2014]+\s*")
"""A dash with a space on one side ends a phrase ("kids' books- classics"); "e-bike" keeps it."""
_RELATIVE_TAIL = re.compile(r"(?<=\w)\s+(?:that|which|who|whom)\s+\w.*$", re.IGNORECASE)
"""A relative clause describes the end, it is not part of it: "a collection of books that take
me there" owns "collection of books"."""
_QUANTITY = re.compile(
    r"^(?:lots of|a lot of|loads of|plenty of|a bunch of|a few|few|a couple of|some|many|two|three"
    r"|several)\s+(?=\S)",
    re.IGNORECASE,
)
_NEW = re.compile(r"^(?:brand[- ])?new\s+(?=\S)", re.IGNORECASE)
"""A possession is the same thing new or not: "a new puppy" and "my puppy" are one claim."""
_GERUND_DEMONSTRATIVE = re.compile(r"^([a-z]+ing)\s+(?:this|that|these|those)\s+", re.IGNORECASE)
""""making this cake" (pointing at a photo) prefers making cake; the pointing is dropped."""
_DEMONSTRATIVE = re.compile(r"^(?:this|that|these|those)\s+", re.IGNORECASE)
_NAME_OR_MODEL = re.compile(r"(?:^|\s)(?:[A-Z][\w-]*|[\w-]*\d[\w-]*)(?=\s|$)")


def words(text: str) -> list[str]:
    return [w.lower().replace("\u2019", "'") for w in _WORD.findall(text)]


def well_formed(text: str, *, max_words: int = 6) -> bool:
    """A noun phrase or a name: no pronoun, placeholder, clause or dangling function word."""
    found = words(text)
    if not found or len(found) > max_words or " - " in text or "- " in text or "and" in found:
        return False
    if found[0] in _FUNCTION_EDGE or found[-1] in _FUNCTION_EDGE:
        return False
    if found[0] in PLACEHOLDERS or found[-1] in PLACEHOLDERS:
        return False
    return not any(w in _CLAUSE_WORDS for w in found)


def ownable(text: str) -> bool:
    """A concrete possession ("red kayak") or something with a name or model ("Tesla")."""
    found = words(text)
    if not found or found[-1] in ABSTRACT_NOUNS:
        return False
    head = found[-1]
    singular = head[:-1] if head.endswith("s") else head
    return head in OWNABLE_HEADS or singular in OWNABLE_HEADS or bool(_NAME_OR_MODEL.search(text))


@dataclass(frozen=True, slots=True)
class Abstain:
    """Why the gate dropped a finding: kept for a debug trace, never stored as a belief."""

    reason: str


def judge(finding: Finding) -> Finding | Abstain:
    """The finding with its object tidied, or why an end is not well formed."""
    obj = finding.object.strip()
    if is_speaker_term(obj):
        ok = finding.relation in _SPEAKER_OBJECTS
        return finding if ok else Abstain("the speaker as the object of a non-social relation")
    if finding.relation in VERB_PHRASE_RELATIONS:
        return finding if _verb_phrase_ok(obj) else Abstain("a verb phrase that trails off")
    if not _subject_ok(_split_date(finding.subject)[0]):
        return Abstain("the subject is not a noun phrase")
    if finding.relation == "has_status" and _activity_subject(finding.subject):
        return Abstain("an activity is not a task with a status")  # "finished rereading"
    if finding.relation in CLOSED_OBJECT_RELATIONS:
        return finding
    tidied = _tidy(finding.relation, obj)
    if tidied is None:
        return Abstain("a pointing word with nothing named after it")
    return _judge_object(finding, tidied)


def _split_date(name: str) -> tuple[str, str]:
    """A dated event's name and its date suffix ("pride parade", " (2023-08-11)"): the gate
    judges the name; the date only tells two events of one name apart."""
    match = _DATE_SUFFIX.search(name)
    return (name[: match.start()], match.group()) if match else (name, "")


def _judge_object(finding: Finding, named: str) -> Finding | Abstain:
    obj, dated = _split_date(named)
    if obj.endswith(("'s", "\u2019s")) and obj[:1].isupper():
        obj = obj[:-2]
    if is_project_term(obj) or not well_formed(obj):
        return Abstain("the object is not a noun phrase or a name")
    if finding.relation == "owns" and not ownable(obj):
        return Abstain("owns needs something ownable")
    if finding.relation == "has_role" and _judgement(obj):
        return Abstain("a judgement of the job is not a role")
    named_facet = finding.facet is not None and not finding.facet.startswith("topic:")
    if finding.relation in _TASTE_RELATIONS and _PERSONS.intersection(_others(obj)):
        return Abstain("a pronoun names nothing on its own")
    if finding.relation in _TASTE_RELATIONS and not named_facet and _abstract(obj):
        return Abstain("a feeling, quantity or fragment is not a taste")
    facet = finding.facet
    if obj != finding.object and facet == preference_facet(finding.object):
        facet = preference_facet(obj)
    return Finding(
        finding.subject,
        finding.relation,
        obj + dated,
        facet,
        finding.confidence,
        finding.polarity,
        finding.tense,
    )


_DOING_TO_ONESELF = re.compile(r"^[a-z-]+ing\s+myself\s+(?=\S)", re.IGNORECASE)
""""teaching myself new recipes", "challenging myself with long hikes": the speaker is the one
the pastime is done to, which names no one else; a pronoun anywhere else still does."""


def _others(obj: str) -> list[str]:
    """The words of ``obj`` that may point at someone another sentence names: all of them, but
    the "myself" of a pastime done to oneself."""
    found = words(obj)
    if _DOING_TO_ONESELF.match(obj):
        found.remove("myself")
    return found


def clean_object(finding: Finding) -> Finding | None:
    """:func:`judge`, without the reason."""
    judged = judge(finding)
    return judged if isinstance(judged, Finding) else None


def _tidy(relation: str, obj: str) -> str | None:
    """Cut a dash tail, a quantity before a possession, a pointing "this"; ``None`` when only
    the pointing is left ("this one"), or a gerund whose "that" was its object."""
    whole = _DASH_TAIL.split(obj, maxsplit=1)[0]
    obj = _RELATIVE_TAIL.sub("", whole)
    if obj != whole and _GERUND.fullmatch(obj.strip()):
        return None  # "teaching that to kids": "that" was what is taught, not a relative
    if relation == "owns":
        obj = _NEW.sub("", _QUANTITY.sub("", obj))
    if relation in _TASTE_RELATIONS:
        obj = _GERUND_DEMONSTRATIVE.sub(r"\1 ", obj)
    rest = _DEMONSTRATIVE.sub("", obj)
    if rest != obj and len(words(rest)) < 2:
        return None
    return rest


def about_the_project(finding: Finding) -> bool:
    """A "we" finding speaks for the project only for the project's kinds of claim."""
    return not is_project_term(finding.subject) or finding.relation in PROJECT_RELATIONS


def _abstract(obj: str) -> bool:
    """A feeling or quantity, a participle fragment ("lost in …"), a verb leading or alone
    ("get …", "wait"), a modifier without its noun ("making new") or an alternative ("hiking
    or board games"): not one thing a person prefers."""
    found = words(obj)
    short_abstract = len(found) <= 2 and (found[-1] in ABSTRACT_NOUNS or found[0] in ABSTRACT_NOUNS)
    if found[0] == "getting":  # "getting lost in …", "getting immersed in …": a state
        found = found[1:] or found
    leading = len(found) > 1 and (
        found[0] in _LEADING_VERBS or (found[0].endswith("ed") and found[1] in _PREPOSITIONS)
    )
    deictic = bool(_DEICTIC & set(found))
    fragment = (len(found) == 1 and found[0] in _BARE_VERBS) or found[-1] in _DANGLING_END
    return short_abstract or leading or deictic or fragment or "or" in found


def _judgement(obj: str) -> bool:
    found = words(obj)
    return found[0] in _DEGREE or found[-1] in _JUDGEMENTS


def _activity_subject(subject: str) -> bool:
    """ "rereading", "re-watching the series": a gerund opens the subject, no article."""
    first = subject.strip().split(" ", 1)[0].lower()
    return bool(_GERUND.fullmatch(first)) and first not in _ING_NOUNS


def _subject_ok(subject: str) -> bool:
    found = words(subject)
    if not found or len(found) > 6:
        return False
    if len(found) == 1:
        return True
    if any(w in _CLAUSE_WORDS for w in found):
        return False
    return found[0] not in _FUNCTION_EDGE - {"my", "our", "the"} and found[-1] not in (
        _FUNCTION_EDGE | {"it", "me"}
    )


def _verb_phrase_ok(obj: str) -> bool:
    found = words(obj)
    return bool(found) and len(found) <= 12 and found[-1] not in _FUNCTION_EDGE
