"""What people tell in passing, inside a story about something else (issue 27, item 2).

* **A possession told by what happened to it** — "my car broke down on the way to work", "my
  laptop crashed last week": the speaker has the thing (I, owns, car). Only heads on the closed
  list of ownable things (:data:`~formation.deterministic.nouns.OWNABLE_HEADS`), never a pet
  (a pet that "died" is gone, :mod:`.animals`), and only for what happens to things one has: it
  broke, crashed, was stolen, needs a repair.
* **A pastime planned with its time** — "I'm hiking with friends this weekend", "I'm going
  climbing tomorrow": the speaker's plan, (I, intends_to, hiking), dated when the words ground
  a day ahead (:func:`.dates.ground_ahead`), as the plans of :mod:`.plans` are. Only a pastime on
  the closed list (:func:`.habits.pastime`): "I'm visiting my aunt this weekend" or "I'm
  working this weekend" plan no pastime.
* **A venture started** — "I started my own online clothing store": (I, owns, online clothing
  store), a venture of the closed list (:mod:`.plans`).
* **Work told as an involvement** — "I've been involved in some charity work": (I,
  participated_in, charity work).
* **Reading as a pastime** — "I've been reading as usual", "I'm reading a fantasy book": the
  speaker reads, (I, participated_in, reading), when a book, a title or a habit is named.

Both are read from the whole clause, so the story around them ("Had a wild week, my car broke
down …") does not hide them.
"""

from __future__ import annotations

from datetime import date

from engram.formation.deterministic.dates import ground_ahead
from engram.formation.deterministic.dispatch import ClauseTriggers
from engram.formation.deterministic.findings import WEAK_CONFIDENCE, Finding
from engram.formation.deterministic.habits import pastime
from engram.formation.deterministic.nouns import OWNABLE_HEADS, PET_HEADS
from engram.formation.deterministic.plans import VENTURE_PATTERN
from engram.formation.screening import screened

__all__ = ["TRIGGERS", "propose_in_passing"]

_HAPPENED_TO = screened(
    r"\b[Mm]y\s+(?:(?:old|new|brand[- ]new|trusty|poor)\s+)?(?P<obj>[a-z-]+(?:\s+(?!just|finally|suddenly|totally|completely)[a-z-]+)?)\s+"
    r"(?:(?:just|finally|suddenly|totally|completely)\s+)?"
    r"(?:broke\s+down|broke|crashed|died\s+on\s+me|got\s+stolen|was\s+stolen|got\s+towed"
    r"|got\s+a\s+flat|needs?\s+(?:a\s+)?(?:fixing|repairs?|new\s+battery)|is\s+in\s+the\s+shop"
    r"|got\s+(?:fixed|repaired)|stopped\s+working)\b"
)
""""my car broke down", "my phone got stolen": things one has, told by what befell them."""
_PASTIME_AHEAD = screened(
    r"^I(?:'m|\s+am)\s+(?:(?:finally|also|actually|really)\s+)?(?:going\s+)?(?P<gerund>[a-z]+ing)\b"
    r"(?P<rest>[^.!?]*?)\b(?P<when>this\s+(?:weekend|saturday|sunday|evening|afternoon)|tonight"
    r"|tomorrow|next\s+(?:week|weekend|month|monday|tuesday|wednesday|thursday|friday|saturday"
    r"|sunday))\b"
)
""""I'm hiking with some friends this weekend", "I'm going kayaking tomorrow"."""
_STARTED_VENTURE = screened(
    r"^I\s+(?:(?:just|finally|recently|also|actually)\s+)*(?:started|opened|launched|founded)\s+"
    r"(?:up\s+)?(?:my\s+own|my|a|an)\s+(?P<obj>" + VENTURE_PATTERN + r")\b"
)
""""I started my own online clothing store", "I opened a bakery": a venture started is the
speaker's (``owns``), as "my dance studio" is; "I'm opening a bakery" is still a plan
(:mod:`.plans`)."""
_INVOLVED = screened(
    r"^I(?:'ve\s+been|\s+have\s+been|'m|\s+am|\s+got)\s+(?:(?:really|also|heavily|more)\s+)?"
    r"involved\s+(?:in|with)\s+(?:some\s+|a\s+lot\s+of\s+|lots\s+of\s+)?"
    r"(?P<obj>(?:charity|volunteer|community|church|relief|outreach|advocacy|activist)\s+work"
    r"|[a-z]+ing)\b"
)
""""I've been involved in some charity work", "I got involved in fundraising": work told as
an involvement is the speaker's pastime."""
_READING = screened(
    r"^I(?:'m|\s+am|'ve\s+been|\s+have\s+been)\s+(?:(?:currently|really|still|just|always)\s+)?"
    r"reading\s*(?:$|[.!,;:-]|\s+(?:a\s+lot|as\s+usual|a\s+bunch|loads|so\s+much|every\s+\w+)\b"
    r"|\s+(?:a|an|this|that|another|the)\s+(?:(?:new|great|good|amazing|fantasy|mystery|sci-fi"
    r"|romance|fascinating|classic)\s+)*(?:book|novel|series|memoir|trilogy)\b"
    r"|\s+(?:a|an|this|the)?\s*[\w\s]{0,30}?\bcalled\s+\"|\s+\""
    r"|\s+(?:(?:her|his|their|some|lots\s+of|so\s+many|cool|great|old|new)\s+)+(?:stuff|books|novels"
    r"|stories|work|poetry|memoirs|comics)\b)"
    r"|^I(?:'m|\s+am)\s+always\s+(?:on\s+the\s+lookout|looking)\s+for\s+(?:new|good|great)\s+"
    r"(?:reads|books|novels)\b"
)
""""I've been reading as usual", "I'm reading a fantasy book that …", "I'm currently reading
"The Lean Startup"": reading is the speaker's pastime. Not "I'm reading your message" or
"I'm reading up on visas": only a book, a quoted title or reading told as a habit."""


def propose_in_passing(text: str, occurred_on: date | None) -> list[Finding]:
    """A possession told by what befell it, a pastime planned with its time, reading."""
    findings: list[Finding] = []
    for match in _HAPPENED_TO.finditer(text):
        head = match.group("obj").split()[-1].lower()
        if head in OWNABLE_HEADS and head not in PET_HEADS:
            findings.append(Finding("I", "owns", head, tense="present"))
    venture = _STARTED_VENTURE.match(text)
    if venture is not None:
        findings.append(Finding("I", "owns", venture.group("obj").lower(), tense="present"))
    involved = _INVOLVED.match(text)
    if involved is not None and (
        involved.group("obj").endswith("work")
        or pastime(involved.group("obj")) is not None
        or involved.group("obj") in {"fundraising", "volunteering", "organizing", "campaigning"}
    ):
        findings.append(Finding("I", "participated_in", involved.group("obj"), tense="present"))
    if _READING.match(text):
        findings.append(Finding("I", "participated_in", "reading", tense="present"))
    planned = _PASTIME_AHEAD.match(text)
    if planned is not None:
        gerund = pastime(planned.group("gerund"))
        if gerund is not None:
            when = ground_ahead(planned.group("when"), occurred_on)
            plan = f"{gerund} ({when})" if when else gerund
            findings.append(
                Finding("I", "intends_to", plan, confidence=WEAK_CONFIDENCE, tense="present")
            )
    return findings


TRIGGERS: ClauseTriggers = {
    propose_in_passing: (_HAPPENED_TO, _STARTED_VENTURE, _INVOLVED, _READING, _PASTIME_AHEAD)
}
"""The patterns one of which must match a clause for :func:`propose_in_passing` to find
anything (:mod:`.dispatch` skips it otherwise)."""
