"""Sensitivity classification (seed 000, stage 6): what a belief touches, not whether it forms.

Formation is autonomous, so a sensitive belief is committed and flagged for review; the user
clears the flag, retires the belief or localises it afterwards. Terms match at word starts
("pain" is health, "Spain" is not), and a category is listed once, in a fixed order.
"""

from __future__ import annotations

import re

from engram.formation.screening import NeedleIndex, Screened, lowered, screened

_TERMS: dict[str, tuple[str, ...]] = {
    "health": (
        r"diabet\w*",
        r"cancer\w*",
        r"tumou?r\w*",
        r"depress(?:ion|ed|ive)",
        r"anxiety",
        r"panic attacks?",
        r"migraines?",
        r"headaches?",
        r"asthma\w*",
        r"allerg\w*",
        r"pain(?:s|ful)?",
        r"aches?",
        r"nause\w*",
        r"dizz\w*",
        r"fever\w*",
        r"symptoms?",
        r"rash(?:es)?",
        r"medication\w*",
        r"prescri\w*",
        r"therap(?:y|ist)",
        r"pregnan\w*",
        r"adhd",
        r"autis\w*",
        r"insomnia",
        r"bipolar",
        r"hiv",
        r"surgery",
        r"diagnos\w*",
        r"chronic\w*",
        r"blood pressure",
        r"injur\w*",
        r"disorder\w*",
        r"illness\w*",
        r"disease\w*",
        r"doctor\w*",
        r"hospital\w*",
    ),
    "finances": (
        r"salary",
        r"salaries",
        r"debts?",
        r"loans?",
        r"mortgages?",
        r"bank accounts?",
        r"income",
        r"bankrupt\w*",
        r"credit score",
        r"net worth",
        r"savings",
        r"earn(?:s|ing)? \$?\d",
        r"invest(?:ments?|s|ing)",
        r"pay(?:s|ing)? rent",
    ),
    "sexuality": (
        r"gay",
        r"lesbian",
        r"bisexual",
        r"transgender",
        r"queer",
        r"asexual",
        r"sexual orientation",
    ),
    "religion": (
        r"christian\w*",
        r"muslim",
        r"islam\w*",
        r"jewish",
        r"judaism",
        r"hindu\w*",
        r"buddhis\w*",
        r"atheis\w*",
        r"agnostic",
        r"catholic\w*",
        r"church",
        r"mosque",
        r"synagogue",
        r"pray\w*",
        r"ramadan",
        r"kosher",
        r"halal",
    ),
    "politics": (
        r"democrats?",
        r"republicans?",
        r"labour party",
        r"conservative party",
        r"vote[ds]? for",
        r"voting for",
        r"liberal party",
        r"green party",
        r"trade union",
        r"political\w*",
    ),
    "ethnicity": (r"ethnicity", r"racial\w*", r"immigra\w*", r"citizenship", r"visa status"),
    "criminal_record": (r"arrest\w*", r"convicted", r"conviction", r"criminal record", r"parole"),
    "precise_location": (
        r"\d+\s+\w+(?:\s\w+)?\s+(?:street|st|avenue|ave|road|rd|lane|ln|boulevard|blvd|drive|dr"
        r"|court|ct|way|place|pl)\b\.?",
        r"apartment \w+",
        r"apt\.? \w+",
        r"-?\d{1,3}\.\d{3,},\s*-?\d{1,3}\.\d{3,}",
        r"zip code",
        r"postcode",
    ),
}

_PATTERNS: dict[str, Screened] = {
    kind: screened(r"(?<![A-Za-z])(?:" + "|".join(terms) + r")(?![A-Za-z])", re.IGNORECASE)
    for kind, terms in _TERMS.items()
}
_ITEMS = tuple(_PATTERNS.items())
_INDEX = NeedleIndex.of([pattern for _, pattern in _ITEMS])
"""Every class's needles, found in one pass: a class none of whose needles is in the text is
not searched (:class:`~formation.screening.NeedleIndex`)."""
_POSTCODE = re.compile(r"(?<![A-Za-z])[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}(?![A-Za-z])")

SENSITIVITY_KINDS: tuple[str, ...] = tuple(_TERMS)


def classify_sensitivity(text: str) -> list[str]:
    """The sensitivity categories ``text`` touches, in a fixed order."""
    low = lowered(text)
    kinds = [
        kind for kind, pattern in _INDEX.chosen(text, _ITEMS) if pattern.search_lowered(text, low)
    ]
    if "precise_location" not in kinds and _POSTCODE.search(text):
        kinds.append("precise_location")
    return kinds
