"""Eligibility and safety gates (seed 000, stage 4 and 6): hard refusals, always applied.

These run after admission on every candidate, from either extractor arm. Secret and instruction
checks look at the rendered statement *and* at the authoritative source text the candidate
cites, so a model's paraphrase cannot launder a credential or an injected instruction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from schemas.claims import RefusalReason

_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{16,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        r"\bAIza[0-9A-Za-z_-]{30,}",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----",
        r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s@/]+@",
        r"(?i)\b(?:password|passwd|passphrase|api[ _-]?key|secret|token|pin)\b\s*(?:is|:|=)\s*\S+",
    )
)

_INSTRUCTION_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bignore (?:all |any |the )?(?:previous|prior|above|earlier) (?:instructions|rules)",
        r"\bdisregard (?:all |any |the )?(?:previous|prior|above|earlier)",
        r"\byou (?:must|should|will) (?:always|never)\b",
        r"\b(?:system prompt|developer message|jailbreak)\b",
        r"\bfrom now on,? (?:you|always|never)\b",
    )
)

_SENSITIVE_TERMS: dict[str, tuple[str, ...]] = {
    "health": (
        "diabet",
        "cancer",
        "depress",
        "anxiety",
        "migraine",
        "asthma",
        "allerg",
        "pain",
        "symptom",
        "medication",
        "therapy",
        "pregnan",
        "adhd",
        "insomnia",
    ),
    "finances": ("salary", "debt", "loan", "mortgage", "bank account", "income", "bankrupt"),
    "sexuality": ("gay", "lesbian", "bisexual", "transgender", "sexual orientation"),
    "religion": (
        "christian",
        "muslim",
        "jewish",
        "hindu",
        "buddhist",
        "atheist",
        "church",
        "mosque",
        "synagogue",
    ),
    "politics": ("democrat", "republican", "labour party", "conservative party", "vote for"),
}


def find_secret(texts: Iterable[str]) -> str | None:
    """The first secret-shaped pattern matched in any of ``texts`` (its pattern, not its value)."""
    for text in texts:
        for pattern in _SECRET_PATTERNS:
            if pattern.search(text):
                return pattern.pattern
    return None


def find_instruction(texts: Iterable[str]) -> str | None:
    for text in texts:
        for pattern in _INSTRUCTION_PATTERNS:
            if pattern.search(text):
                return pattern.pattern
    return None


def eligibility_refusal(statement: str, source_text: str) -> tuple[RefusalReason, str] | None:
    """The first hard gate a candidate fails, with a detail that never repeats the secret."""
    if find_secret((statement, source_text)) is not None:
        return RefusalReason.SECRET, "secret-shaped content in the candidate or its source"
    if find_instruction((statement,)) is not None:
        return RefusalReason.INSTRUCTION_SHAPED, "instruction-shaped statement"
    return None


def classify_sensitivity(text: str) -> list[str]:
    """Sensitivity categories the text touches; a sensitive belief is committed but flagged."""
    lowered = text.lower()
    return [kind for kind, terms in _SENSITIVE_TERMS.items() if any(t in lowered for t in terms)]
