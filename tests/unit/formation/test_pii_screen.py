"""``find_pii`` skips digit-needing kinds in a text without a digit; that must lose nothing.

The claim (:data:`formation.pii.NEEDS_A_DIGIT`) is checked against every detector directly,
bypassing the screen: on digit-free texts shaped like each identifier (the label words, letter
runs where the digits would be, separators), no detector of those kinds accepts anything.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.formation import pii
from engram.formation.pii import NEEDS_A_DIGIT, PII_KINDS, find_pii

_WORDS = (
    "passport",
    "passport number is",
    "social security number",
    "ssn:",
    "national insurance number",
    "account number",
    "routing no.",
    "sort code",
    "acct #",
    "aadhaar",
    "driver's license",
    "tax id",
    "GB",
    "DE",
    "QQ",
    "AB",
    "IBAN",
    "phone",
    "+",
    "(",
    ")",
)
_ALPHABET = st.sampled_from(
    [*"ABCDEFGHJKLMNPQRSTWXYZabcxyz", " ", "-", ".", ":", "#", "/", "²", "Ⅻ", "\u00a0"]
)
_CHUNK = st.one_of(st.sampled_from(_WORDS), st.text(_ALPHABET, min_size=1, max_size=24))
_DIGITLESS = st.lists(_CHUNK, max_size=12).map(" ".join)


def _accepted(kind: str, text: str) -> list[str]:
    """What the kind's detectors accept in ``text``, without the digit screen."""
    hits = []
    for pattern, accept in pii._DETECTORS[kind]:
        for match in pattern.finditer(text):
            group = "value" if "value" in pattern.groupindex else 0
            if accept is None or accept(match.group(group)):
                hits.append(match.group(group))
    return hits


@settings(max_examples=400)
@given(text=_DIGITLESS)
def test_no_digit_needing_detector_accepts_a_digitless_text(text: str) -> None:
    assert re.search(r"\d", text) is None
    for kind in sorted(NEEDS_A_DIGIT):
        assert _accepted(kind, text) == [], kind


@given(text=st.text(max_size=60))
def test_the_screen_changes_no_finding(text: str) -> None:
    kinds = sorted(PII_KINDS)
    unscreened = sorted({(k, h) for k in kinds for h in _accepted(k, text)})
    screened = sorted({(f.kind, text[f.start : f.end]) for f in find_pii(text, kinds)})
    assert screened == unscreened


def test_identifiers_with_digits_are_still_found() -> None:
    text = "my passport number is X1234567 and card 4111 1111 1111 1111, ssn 123-45-6789"
    kinds = {f.kind for f in find_pii(text, sorted(PII_KINDS))}
    assert {"passport", "payment_card", "national_id"} <= kinds
    assert "email" in {f.kind for f in find_pii("write to a@b.example", ["email"])}
