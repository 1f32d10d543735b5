"""Health the speaker states of themselves: conditions, injuries, allergies and diets.

"I have asthma", "I was diagnosed with celiac disease last year", "I'm allergic to shellfish",
"I broke my wrist skiing", "I've been vegan for five years", and what is told in passing:
"I'm doing physio for my knee", "I'm recovering from shoulder surgery", "my ankle injury is
acting up", "I can't have dairy": each is (I, has_condition, …),
special category data. What this module finds forms only under a policy that enables
``has_condition`` (it is off by default, :data:`formation.policy.DEFAULT_ENABLED_RELATIONS`);
every candidate of it is classified ``health`` and flagged for review, and its portability
ceiling is ``local`` (:mod:`formation.vocabulary`).

Precision over recall, as everywhere in the arm, and more so here: the condition must be on a
closed list (or an allergy or a broken, sprained or torn body part from closed lists), the
speaker must say it of themselves ("my mum has diabetes" names no "I"), and what is only feared,
wished or asked ("I hope I don't have the flu", "do I have a cold?") is silenced by the clause's
mood before it gets here. Passing illnesses ("a cold", "the flu") and feelings ("stressed") are
not conditions and form nothing.
"""

from __future__ import annotations

import re
from datetime import date

from engram.formation.deterministic.dispatch import Reader, Triggers
from engram.formation.deterministic.findings import Finding
from engram.formation.deterministic.nouns import closed
from engram.formation.deterministic.phrases import ADVERBS

_CONDITIONS = closed(
    """
    asthma diabetes arthritis eczema psoriasis epilepsy migraines insomnia anxiety depression
    adhd autism dyslexia celiac coeliac ibs crohn's lupus fibromyalgia scoliosis tinnitus
    hypertension anemia anaemia endometriosis pcos ptsd ocd
    """
)
"""Lasting conditions a person may tell; "celiac" and "crohn's" stand for their disease."""
_TYPED = closed("type 1 type 2 chronic severe mild seasonal")
_BODY = closed(
    """
    wrist ankle knee arm leg foot hand finger toe shoulder elbow hip back neck collarbone rib
    ribs nose thumb hamstring acl meniscus achilles
    """
)
_DIETS = closed("vegan vegetarian pescatarian gluten-free dairy-free lactose-intolerant")

_I_HAVE = re.compile(
    r"\bI(?:'ve| have)\s+" + ADVERBS + r"(?:got\s+|had\s+|been\s+living\s+with\s+)?"
    r"(?P<cond>(?:[\w-]+\s+){0,2}?[\w'-]+)(?=\s*(?:[,.;!?]|$|\s+(?:and|but|so|since|for|which)\b))"
    r"|\bI\s+" + ADVERBS + r"(?:was|got|have been|'ve been)\s+diagnosed\s+with\s+"
    r"(?P<diag>(?:[\w-]+\s+){0,2}?[\w'-]+)(?=\s*(?:[,.;!?]|$|\s+(?:and|but|so|last|in|a|when|at)\b))"
    r"|\bI\s+(?:live|deal|struggle|cope)\s+with\s+(?P<live>(?:[\w-]+\s+){0,2}?[\w'-]+)"
    r"(?=\s*(?:[,.;!?]|$|\s+(?:and|but|so|every|daily)\b))",
    re.IGNORECASE,
)
"""The speaker's own lasting condition: "I have asthma", "I was diagnosed with ADHD"."""
_ALLERGIC = re.compile(
    r"\bI(?:'m| am)\s+" + ADVERBS + r"(?:severely\s+|deathly\s+|very\s+)?allergic\s+to\s+"
    r"(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\b(?!\s+(?:and|or)\b)"
    r"|\bI\s+have\s+(?:an?\s+|a\s+severe\s+)?(?P<food>[a-z][\w-]*)\s+allergy\b",
    re.IGNORECASE,
)
_INJURED = re.compile(
    r"\bI(?:'ve|\s+have)?\s+" + ADVERBS + r"(?P<how>broke|broken|sprained|tore|torn|fractured"
    r"|dislocated|injured|hurt|twisted|pulled|strained)\s+"
    r"(?:my|a)\s+(?:(?P<side>left|right)\s+)?(?P<part>[a-z]+)\b",
    re.IGNORECASE,
)
_IN_PASSING = re.compile(
    r"\bI(?:'m|\s+am|'ve\s+been|\s+have\s+been)\s+" + ADVERBS + r"(?:still\s+)?"
    r"(?:doing|going\s+to|in|starting|getting|having)\s+(?:some\s+)?(?P<care>physio|physiotherapy"
    r"|physical\s+therapy|rehab)\s+(?:for|on)\s+my\s+(?:(?:left|right|bad)\s+)?(?P<part>[a-z]+)\b"
    r"|\bI(?:'m|\s+am)\s+" + ADVERBS + r"(?:still\s+)?recovering\s+from\s+(?:a\s+|my\s+)?"
    r"(?:(?:left|right|bad)\s+)?(?P<healing>[a-z]+)\s+(?:surgery|injury|operation|fracture)\b"
    r"|\b[Mm]y\s+(?:(?:left|right|bad)\s+)?(?P<hurt>[a-z]+)\s+injury\b"
    r"(?!\s+(?:is|was)\s+(?:gone|healed|better|fine|over)\b)",
    re.IGNORECASE,
)
""""I'm doing physio for my knee", "I'm recovering from shoulder surgery", "my ankle injury is
acting up": an injury told in passing, on the closed list of body parts."""
_CANT_HAVE = re.compile(
    r"\bI\s+(?:can't|cannot|can\s+not)\s+(?:have|eat|drink|do)\s+(?:any\s+)?"
    r"(?P<what>dairy|gluten|lactose|nuts|peanuts|shellfish|wheat|eggs|soy)\b",
    re.IGNORECASE,
)
""""I can't have dairy": the speaker keeps that out of their diet (``dairy-free diet``)."""
_DIET = re.compile(
    r"\bI(?:'m| am|'ve been| have been)\s+" + ADVERBS + r"(?:a\s+|strictly\s+|fully\s+)?"
    r"(?P<diet>vegan|vegetarian|pescatarian|gluten-free|dairy-free|lactose[- ]intolerant)\b"
    r"(?!\s+(?:food|recipes?|restaurant|cafe|place|options?|dishes|meals?|friends?|cookbook)\b)",
    re.IGNORECASE,
)
_INJURY_WORDS = {
    "broke": "broken",
    "broken": "broken",
    "torn": "torn",
    "twisted": "twisted",
    "pulled": "pulled",
    "strained": "strained",
    "fractured": "fractured",
    "sprained": "sprained",
    "tore": "torn",
    "dislocated": "dislocated",
    "injured": "injured",
    "hurt": "injured",
}
_ALLERGENS = closed(
    """
    peanuts peanut nuts tree nuts shellfish fish eggs egg milk dairy soy wheat gluten sesame
    pollen dust cats dogs bees penicillin latex reptiles fur
    """
)
_QUANTIFIERS = re.compile(r"^(?:most|some|all|certain|many)\s+", re.IGNORECASE)


def _condition(phrase: str) -> str | None:
    """The phrase when it is a lasting condition on the closed list ("type 2 diabetes")."""
    words = phrase.lower().split()
    if not words:
        return None
    head = words[-1]
    if head == "disease" and len(words) >= 2 and words[-2] in _CONDITIONS:
        return phrase  # "celiac disease"
    if head not in _CONDITIONS:
        return None
    if any(w not in _TYPED and not w.isdigit() for w in words[:-1]):
        return None  # "I have some anxiety about the trip" is cut before; "big anxiety" is not
    return phrase


def _health(text: str, occurred_on: date | None) -> list[Finding]:
    findings: list[Finding] = []
    match = _I_HAVE.search(text)
    if match is not None:
        told = match.group("cond") or match.group("diag") or match.group("live")
        if (condition := _condition(told)) is not None:
            findings.append(Finding("I", "has_condition", condition.lower(), tense="present"))
    allergy = _ALLERGIC.search(text)
    if allergy is not None:
        what = _QUANTIFIERS.sub("", (allergy.group("what") or allergy.group("food")).lower())
        if what in _ALLERGENS:
            one = what[:-1] if what.endswith("s") and not what.endswith("ss") else what
            findings.append(Finding("I", "has_condition", f"{one} allergy", tense="present"))
    injury = _INJURED.search(text)
    if injury is not None and injury.group("part").lower() in _BODY:
        how = _INJURY_WORDS[injury.group("how").lower()]
        findings.append(
            Finding("I", "has_condition", f"{how} {injury.group('part').lower()}", tense="present")
        )
    passing = _IN_PASSING.search(text)
    if passing is not None:
        part = (passing.group("part") or passing.group("healing") or passing.group("hurt")).lower()
        if part in _BODY:
            findings.append(Finding("I", "has_condition", f"{part} injury", tense="present"))
    cant = _CANT_HAVE.search(text)
    if cant is not None:
        what = cant.group("what").lower()
        told = "lactose intolerance" if what == "lactose" else f"{what}-free diet"
        findings.append(Finding("I", "has_condition", told, tense="present"))
    diet = _DIET.search(text)
    if diet is not None:
        kind = diet.group("diet").lower().replace(" ", "-")
        told = "lactose intolerance" if kind == "lactose-intolerant" else f"{kind} diet"
        if kind in _DIETS:
            findings.append(Finding("I", "has_condition", told, tense="present"))
    return findings


PROPOSERS: tuple[Reader, ...] = (_health,)

TRIGGERS: Triggers = {_health: (_I_HAVE, _ALLERGIC, _INJURED, _DIET, _IN_PASSING, _CANT_HAVE)}
"""The patterns one of which must match a clause for the reader to find anything
(:mod:`.dispatch` skips it otherwise)."""
