"""Eligibility and safety gates (seed 000, stages 4 and 6): hard refusals, always applied.

They run after admission, the speaker rule and the trust, name and scope checks, on every
candidate from either extractor arm, in a fixed order, each with its own refusal reason:

1. ``secret`` — credentials, keys, tokens, private keys, passwords (:mod:`.secrets`), looked
   for in the rendered statement *and* the whole source message the candidate cites, so a
   model's paraphrase cannot launder a credential that sits next to the quote;
2. ``pii`` — personal identifiers of the kinds the policy lists (:mod:`.pii`), read the same way;
3. ``transient`` — task detail that will not matter next week (:mod:`.injection`);
4. ``system_restatement`` — platform instructions or private reasoning repeated back, anything
   from a ``system`` message, and anything cited from inside a ``<thinking>`` block;
5. ``instruction_shaped`` — an instruction to the agent dressed as a fact or preference; and
   markup or code as a claim's end (``<script>…``, ``{{…}}``, ``javascript:``), read in the
   statements and the quote (the clause), never the whole sentence, with the detail ``markup
   or code``.

The last three read the statement and the sentence around the quote, not the whole message:
"remind me in 5 minutes" in one sentence does not make "I live in Berlin" in another transient.

A refusal's ``detail`` names the kind of thing found (``openai_api_key``, ``countdown``), never
the thing itself; :func:`redact` removes secrets and policy PII from the words a refusal keeps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from engram.formation.injection import (
    AGENT_RESTATEMENT,
    INSTRUCTION_SHAPED,
    MARKUP,
    SYSTEM_RESTATEMENT,
    TRANSIENT,
)
from engram.formation.pii import find_pii
from engram.formation.screening import NeedleIndex, Screened, lowered, screen
from engram.formation.secrets import Finding, find_secrets, secrets_by_context
from engram.formation.sensitivity import classify_sensitivity
from engram.schemas.claims import RefusalReason
from engram.schemas.common import Role

__all__ = ["Cited", "classify_sensitivity", "eligibility_refusal", "redact", "redact_cited"]

Verdict = tuple[RefusalReason, str]


@dataclass(frozen=True, slots=True)
class Markers:
    """A marker set of :mod:`.injection`, each marker behind its cheap check
    (:mod:`.screening`). The needles of every marker of every set are looked for in one pass
    over a text (:data:`_MARKER_INDEX`, a :class:`~formation.screening.NeedleIndex`): a marker
    none of whose needles is in the text cannot occur in it, so it is not searched."""

    markers: tuple[tuple[int, str, Screened], ...]
    """Each marker's bit in the shared index, its name and its screened pattern, in order."""
    mask: int
    """The bits of this set's markers."""

    def first(self, texts: Sequence[str], possible: Sequence[int] | None = None) -> str | None:
        """The name of the first marker that occurs in any of ``texts``
        (:func:`.injection.first_marker`, the same answer); ``possible`` is
        :func:`marker_needles` of the texts, when the caller has it already."""
        masks = possible if possible is not None else marker_needles(texts)
        for text, found in zip(texts, masks, strict=True):
            if not found & self.mask:
                continue
            low = lowered(text)
            for bit, name, pattern in self.markers:
                if found & bit and pattern.search_lowered(text, low):
                    return name
        return None


def _marker_sets(
    *sets: tuple[tuple[str, re.Pattern[str]], ...],
) -> tuple[NeedleIndex, tuple[Markers, ...]]:
    """One index over the markers of all ``sets``, and each set with its bits in it."""
    screened = [(name, screen(pattern)) for markers in sets for name, pattern in markers]
    index = NeedleIndex.of([pattern for _, pattern in screened])
    found: list[Markers] = []
    position = 0
    for markers in sets:
        bits = range(position, position + len(markers))
        members = tuple((1 << b, screened[b][0], screened[b][1]) for b in bits)
        found.append(Markers(members, sum(1 << b for b in bits)))
        position += len(markers)
    return index, tuple(found)


(
    _MARKER_INDEX,
    (_TRANSIENT, _SYSTEM_RESTATEMENT, _AGENT_RESTATEMENT, _INSTRUCTION_SHAPED, _MARKUP),
) = _marker_sets(TRANSIENT, SYSTEM_RESTATEMENT, AGENT_RESTATEMENT, INSTRUCTION_SHAPED, MARKUP)
"""Every candidate's statement and sentence is read for all of them."""


def marker_needles(texts: Sequence[str]) -> tuple[int, ...]:
    """For each text, the markers (bits of :data:`_MARKER_INDEX`) that may occur in it."""
    return tuple(_MARKER_INDEX.possible(text) for text in texts)


@dataclass(frozen=True, slots=True)
class Cited:
    """A candidate as the gates read it: what it says and the words it cites."""

    statements: tuple[str, ...]
    """The rendered statement, and the extractor's own statement when it gave one."""
    context: str
    """The sentence(s) of the message around the quote."""
    source: str
    """The whole message content: the authoritative source text."""
    role: Role
    in_private_reasoning: bool = False
    quote: str = ""
    """The words the claim was cut from (the clause), read for markup with the statements: an
    end cut short ("javascript" of "javascript:alert(…)") no longer shows what it was."""


def _kinds(findings: Iterable[Finding]) -> str:
    return ", ".join(dict.fromkeys(f.kind for f in findings))


@lru_cache(maxsize=32)
def _secrets_in(text: str) -> tuple[Finding, ...]:
    """Memoised: every candidate of a message scans the same source text."""
    return tuple(find_secrets(text))


@lru_cache(maxsize=32)
def _secrets_by_context(text: str) -> tuple[Finding, ...]:
    """Memoised: every refusal of a message redacts its words against the same source."""
    return tuple(secrets_by_context(text))


@lru_cache(maxsize=32)
def _pii_in(text: str, kinds: tuple[str, ...]) -> tuple[Finding, ...]:
    return tuple(find_pii(text, kinds))


def _secret(cited: Cited) -> Verdict | None:
    found = [f for text in (*cited.statements, cited.source) for f in _secrets_in(text)]
    if not found:
        return None
    return (
        RefusalReason.SECRET,
        f"secret-shaped content ({_kinds(found)}) in the candidate or its source",
    )


def _pii(cited: Cited, kinds: tuple[str, ...]) -> Verdict | None:
    found = [f for text in (*cited.statements, cited.source) for f in _pii_in(text, kinds)]
    if not found:
        return None
    return RefusalReason.PII, f"personal identifier beyond policy ({_kinds(found)})"


def _transient(cited: Cited, texts: Sequence[str], possible: Sequence[int]) -> Verdict | None:
    marker = _TRANSIENT.first(texts, possible)
    return (
        None if marker is None else (RefusalReason.TRANSIENT, f"transient task detail ({marker})")
    )


def _system_restatement(
    cited: Cited, texts: Sequence[str], possible: Sequence[int]
) -> Verdict | None:
    if cited.role is Role.SYSTEM:
        marker: str | None = "system_message"
    elif cited.in_private_reasoning:
        marker = "private_reasoning_block"
    else:
        marker = _SYSTEM_RESTATEMENT.first(texts, possible)
        if marker is None and cited.role is not Role.USER:
            marker = _AGENT_RESTATEMENT.first(texts, possible)
    if marker is None:
        return None
    return RefusalReason.SYSTEM_RESTATEMENT, f"restates instructions or reasoning ({marker})"


def _instruction_shaped(texts: Sequence[str], possible: Sequence[int]) -> Verdict | None:
    marker = _INSTRUCTION_SHAPED.first(texts, possible)
    if marker is None:
        return None
    return RefusalReason.INSTRUCTION_SHAPED, f"instruction-shaped content ({marker})"


_MAY_BE_MARKUP = re.compile(r"[<{$;=]|script:|table|select", re.IGNORECASE)
"""What every marker of :data:`.injection.MARKUP` needs (a tag's "<", a template's "{" or "$",
a script URL's "script:", a handler's "=", SQL's ";", "table" or "select"; a statement's facet
has a bare ":"): a text with none of them
holds no markup, and most claims' words have none (a cheaper question than the index's)."""


def _markup(cited: Cited) -> Verdict | None:
    texts = (*cited.statements, cited.quote)
    if not any(_MAY_BE_MARKUP.search(text) for text in texts):
        return None
    marker = _MARKUP.first(texts)
    if marker is None:
        return None
    return (
        RefusalReason.INSTRUCTION_SHAPED,
        f"markup or code, not a thing a person names ({marker})",
    )


def eligibility_refusal(cited: Cited, *, pii_kinds: tuple[str, ...]) -> Verdict | None:
    """The first hard gate the candidate fails, in the documented order, or ``None``.

    The three before markup read the same texts (the statements and the sentence), so the
    markers that may occur in each are found once for the three (:func:`marker_needles`);
    markup is read in the statements and the quote alone."""
    found = _secret(cited) or _pii(cited, pii_kinds)
    if found is not None:
        return found
    texts = (*cited.statements, cited.context)
    possible = marker_needles(texts)
    return (
        _transient(cited, texts, possible)
        or _system_restatement(cited, texts, possible)
        or _instruction_shaped(texts, possible)
        or _markup(cited)
    )


@lru_cache(maxsize=4096)
def redact(text: str, *, pii_kinds: tuple[str, ...]) -> str:
    """``text`` with every secret and policy PII replaced by ``[redacted:<kind>]``.

    Overlapping findings merge into one redaction named after the first. Applied to the
    statement and quote of every refusal (whatever its reason), so no refusal row stores a
    credential or an identifier the policy forbids; a refusal for ``secret`` keeps the words
    around the secret, which is what a reviewer needs to see why it was refused. Memoised:
    a pure function of its arguments, and relations, details and a message's quotes recur in
    refusal after refusal.
    """
    findings = sorted(
        [*find_secrets(text), *find_pii(text, pii_kinds)], key=lambda f: (f.start, -f.end)
    )
    pieces: list[str] = []
    cursor = 0
    for finding in findings:
        if finding.end <= cursor:
            continue
        if finding.start >= cursor:
            pieces.append(text[cursor : finding.start])
            pieces.append(f"[redacted:{finding.kind}]")
        cursor = max(cursor, finding.end)
    pieces.append(text[cursor:])
    return "".join(pieces)


def redact_cited(text: str, *, source: str, pii_kinds: tuple[str, ...]) -> str:
    """:func:`redact`, and every secret of ``source`` its context shows wherever its value recurs
    in ``text`` (a secret of a shape of its own is found in ``text`` by :func:`redact` itself).

    A secret is found by its context ("my password is …", "… as my password"), which a
    statement or a clause-long quote cut from the same message may not carry: "I use hunter2 as
    my password" proposes "I uses hunter2", where nothing says a password any more. The value
    the source's context showed to be a secret is removed from every word a refusal keeps."""
    redacted = redact(text, pii_kinds=pii_kinds)
    for found in _secrets_by_context(source):
        value = source[found.start : found.end]
        if len(value) >= 3 and value in redacted:
            redacted = redacted.replace(value, f"[redacted:{found.kind}]")
    return redacted
