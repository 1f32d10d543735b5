"""What the inspector's pages say in words: confidence, refusal reasons, what a correction will
do, a quote inside its message, how up to date a page is. Pure; unit-tested without a server.
The statements themselves are :mod:`formation.wording`'s, shared with the CLI and the API.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from engram.formation.wording import relation_words
from engram.projections.reads.freshness import PrincipalProgress
from engram.schemas.claims import RefusalReason
from engram.schemas.corrections import CorrectionKind


def confidence_words(confidence: float) -> str:
    """Confidence as a person would say it (the number stays beside it on the page)."""
    if confidence >= 0.85:
        return "very sure"
    if confidence >= 0.65:
        return "fairly sure"
    if confidence >= 0.45:
        return "thinks so"
    if confidence >= 0.25:
        return "not sure"
    return "doubtful"


REASON_WORDS: dict[RefusalReason, str] = {
    RefusalReason.UNMAPPED_RELATION: "it is not a kind of thing Engram remembers",
    RefusalReason.UNRESOLVABLE_SUBJECT: "it was not clear whom it was about",
    RefusalReason.UNLOCATABLE_QUOTE: "the words could not be found in what was said",
    RefusalReason.NOT_ASSERTED: "it was a question, a wish or a maybe, not a statement",
    RefusalReason.NOT_CURRENT: "it was about the past, not how things are now",
    RefusalReason.DUPLICATE_CLAIM: "the same thing was said twice in one message",
    RefusalReason.NOT_SPOKEN_BY_PRINCIPAL: "you did not say it: someone or something else did",
    RefusalReason.ENTITY_NAME_LIMIT: "too many different names were involved",
    RefusalReason.CONFLICTING_VALUE: "it conflicted with something said at the same moment",
    RefusalReason.UNTRUSTED_SOURCE: "it came from a source Engram does not trust (a tool, a web page)",
    RefusalReason.SECRET: "it looked like a secret (a password, a key): secrets are never kept",
    RefusalReason.PII: "it held personal data the policy does not keep",
    RefusalReason.TRANSIENT: "it was only true for a moment",
    RefusalReason.SYSTEM_RESTATEMENT: "it repeated the assistant's own instructions",
    RefusalReason.INSTRUCTION_SHAPED: "it read as an instruction to the assistant, not a fact",
    RefusalReason.SCOPE_MISMATCH: "it belonged to another project",
    RefusalReason.OUT_OF_ORDER: "a newer statement had already replaced it",
    RefusalReason.REJECTED_BY_USER: "you said it was not true",
    RefusalReason.TOMBSTONED: "you deleted it, so it is never remembered again",
}
"""Every refusal reason in words (a test checks none is missing)."""


def reason_words(reason: str) -> str:
    try:
        return REASON_WORDS[RefusalReason(reason)]
    except ValueError:
        return reason.replace("_", " ")


DELETE = "delete"
"""The fourth answer beside the three kinds of correction."""

CORRECTION_CHOICES: dict[str, tuple[str, str]] = {
    CorrectionKind.UNTRUE.value: (
        "This is not true",
        "It is retired at once and never formed again from the same words, unless you say it "
        "again later. The evidence stays, marked as rejected by you.",
    ),
    CorrectionKind.CHANGED.value: (
        "This changed",
        "It becomes past: the new value you type replaces it from now on, as if you had said "
        "it. The old value stays in the history.",
    ),
    CorrectionKind.NOT_HERE.value: (
        "This is true, but not here",
        "It stops applying in the project you name and stays true everywhere else.",
    ),
    DELETE: (
        "Delete this",
        "Its words leave every page and every store Engram keeps; only a hash stays, so it is "
        "never formed again. This cannot be undone.",
    ),
}
"""The four answers to "what is wrong with it", each with what it will do, in the order shown."""


@dataclass(frozen=True, slots=True)
class QuoteInContext:
    """A message split around the quote a belief cites: ``before`` + ``quote`` + ``after``."""

    before: str
    quote: str
    after: str
    found: bool


def quote_in_message(content: str, quote: str, span_start: int, span_end: int) -> QuoteInContext:
    """Split ``content`` at the quote's byte span (what formation verified); if the span does
    not hold the quote (a message changed since), at its first occurrence; else not found."""
    raw = content.encode()
    if 0 <= span_start <= span_end <= len(raw) and raw[span_start:span_end] == quote.encode():
        return QuoteInContext(
            raw[:span_start].decode(errors="replace"),
            quote,
            raw[span_end:].decode(errors="replace"),
            found=True,
        )
    at = content.find(quote) if quote else -1
    if at < 0:
        return QuoteInContext(content, "", "", found=False)
    return QuoteInContext(content[:at], quote, content[at + len(quote) :], found=True)


def freshness_words(progress: PrincipalProgress) -> str:
    """ "Up to date with everything you said until 4 Dec 10:42 UTC", or what is still being read."""
    if progress.formed_until is None and progress.pending == 0:
        return "Nothing you said has been read yet."
    parts = []
    if progress.pending and progress.pending_since is not None:
        parts.append(
            f"Still reading {progress.pending} "
            f"{'conversation' if progress.pending == 1 else 'conversations'} "
            f"since {when(progress.pending_since)}; up to date with everything before."
        )
    elif progress.formed_until is not None:
        parts.append(f"Up to date with everything you said until {when(progress.formed_until)}.")
    if progress.parked:
        parts.append(
            f"{progress.parked} {'conversation' if progress.parked == 1 else 'conversations'} "
            "could not be read and wait for an operator."
        )
    return " ".join(parts)


def when(moment: datetime) -> str:
    """A moment as the pages write it: "4 Dec 2026 10:42 UTC"."""
    return moment.astimezone(UTC).strftime("%-d %b %Y %H:%M UTC")


def relation_label(relation: str) -> str:
    """A relation as a filter's option reads it: "lives in"."""
    return relation_words(relation)
