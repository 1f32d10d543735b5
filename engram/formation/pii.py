"""Personal identifiers beyond policy: numbers that identify a person or an account.

Each kind has a detector; the policy's ``pii_kinds`` says which kinds are never formed. A check
digit is verified where the format has one (payment cards: Luhn; IBAN: ISO 7064 mod 97), so an
order number that merely has sixteen digits is not mistaken for a card. Kinds a policy may allow
(``email``, ``phone``) are detected too, so the list is the only thing to change.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from engram.formation.secrets import Finding


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check that every payment card number satisfies."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char)
        if i % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """ISO 13616 IBAN: country, check digits, BBAN, and the mod-97 remainder of 1."""
    compact = re.sub(r"\s", "", text).upper()
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in rearranged)
    return int(number) % 97 == 1


def _card(match: str) -> bool:
    digits = re.sub(r"\D", "", match)
    return 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits)


def _ssn(match: str) -> bool:
    digits = re.sub(r"\D", "", match)
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in {"000", "666"} and area[0] != "9" and group != "00" and serial != "0000"


Detector = tuple[re.Pattern[str], Callable[[str], bool] | None]

_ID_WORDS = (
    r"(?:social\s+security(?:\s+number)?|ssn|national\s+(?:insurance|id(?:entity)?)"
    r"(?:\s+(?:number|no\.?|card))?|ni\s+number|sin|aadhaar|tax\s+(?:id|file\s+number)"
    r"|tfn|driver'?s\s+licen[cs]e(?:\s+(?:number|no\.?))?|licen[cs]e\s+number|personnummer"
    r"|bsn|nie|dni|cpf|steuer-?id)"
)

_DETECTORS: dict[str, tuple[Detector, ...]] = {
    "payment_card": ((re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])"), _card),),
    "national_id": (
        (re.compile(r"(?<![\d-])\d{3}[- ]\d{2}[- ]\d{4}(?![\d-])"), _ssn),
        (
            re.compile(
                r"(?<![A-Z])[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]"
                r"(?![A-Za-z0-9])"
            ),
            None,
        ),
        (
            re.compile(
                rf"(?i)(?<![a-z]){_ID_WORDS}(?![a-z])\W{{0,12}}(?:is\s+|was\s+)?"
                r"(?P<value>[A-Z0-9][A-Z0-9 .-]{4,18}[A-Z0-9])"
            ),
            lambda m: sum(c.isdigit() for c in m) >= 5,
        ),
    ),
    "iban": (
        (
            re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])"),
            iban_valid,
        ),
    ),
    "passport": (
        (
            re.compile(
                r"(?i)(?<![a-z])passport(?:\s+(?:number|no\.?|#|id))?\W{0,6}(?:is\s+|was\s+)?"
                r"(?P<value>[A-Z0-9]{6,10})(?![A-Za-z0-9])"
            ),
            lambda m: any(c.isdigit() for c in m),
        ),
    ),
    "bank_account": (
        (
            re.compile(
                r"(?i)(?<![a-z])(?:account\s+(?:number|no\.?|#)|routing\s+(?:number|no\.?)"
                r"|sort\s+code|acct\.?\s*#?)\W{0,6}(?:is\s+|was\s+)?(?P<value>\d[\d -]{4,20}\d)"
            ),
            None,
        ),
    ),
    "email": ((re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), None),),
    "phone": (
        (
            re.compile(r"(?<![\w+])\+?\d{1,3}[ .-]?\(?\d{2,4}\)?(?:[ .-]?\d{2,4}){2,3}(?!\w)"),
            lambda m: 9 <= sum(c.isdigit() for c in m) <= 15,
        ),
    ),
}

PII_KINDS: frozenset[str] = frozenset(_DETECTORS)
"""Every kind a policy may name in ``pii_kinds``."""

NEEDS_A_DIGIT: frozenset[str] = PII_KINDS - {"email"}
r"""The kinds none of whose detectors can accept a text without a decimal digit: each pattern
has a ``\d`` that must match, or (passport, the national-id word form) an acceptor that counts
``0`` to ``9``. Most messages hold no digit, so these kinds are not searched there (their patterns
try most positions of the text, and a policy names four of them); ``tests/unit/formation/
test_pii_screen.py`` checks the claim against every detector."""
_DIGIT = re.compile(r"\d")


def find_pii(text: str, kinds: Iterable[str]) -> list[Finding]:
    """Substrings of ``text`` that are personal identifiers of one of ``kinds``."""
    found: list[Finding] = []
    digitless = _DIGIT.search(text) is None
    for kind in kinds:
        if digitless and kind in NEEDS_A_DIGIT:
            continue
        for pattern, accept in _DETECTORS.get(kind, ()):
            for match in pattern.finditer(text):
                group = "value" if "value" in pattern.groupindex else 0
                if accept is None or accept(match.group(group)):
                    found.append(Finding(kind, match.start(group), match.end(group)))
    return sorted(set(found), key=lambda f: (f.start, -f.end, f.kind))
