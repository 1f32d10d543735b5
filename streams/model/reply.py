"""Reading a model's reply: find the claims envelope, decode it strictly, hand back proposals.

Models often wrap their JSON in a prefix ("Here are the claims:") or a code fence, so the
decoder looks for the first JSON object with a ``claims`` key, trying at most
:data:`MAX_CANDIDATE_BRACES` opening braces. Once found, the envelope is decoded strictly:
unknown fields and wrong types are errors. A reply with no envelope at all is an error, never an
empty result: an empty result means "this message asserts nothing", and reading a broken reply
as empty would make a misconfigured model look like a quiet conversation.

Pure: text in, proposals out. Quotes are passed on verbatim; admission verifies them against the
message's own bytes. Errors never echo the reply, which may quote the message.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engram.formation.proposals import Proposal
from engram.infra.errors import EngramFailure

MAX_CANDIDATE_BRACES = 32
MAX_END_CHARS = 4096
"""The bound of a claim end (``engram.schemas.claims.ClaimEnd``): longer ends do not decode."""


class ModelReplyError(EngramFailure, ValueError):
    """The reply holds no claims envelope, or its envelope does not decode."""

    code = "model_reply_invalid"
    retriable = True
    exit_code = 1


class ReplyClaim(BaseModel):
    """One claim as the model wrote it. Polarity and tense stay free text for admission to judge:
    a missing or unknown value is refused there with its words, not lost here."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)

    subject: str = Field(max_length=MAX_END_CHARS)
    relation: str
    object: str = Field(max_length=MAX_END_CHARS)
    quote: str
    polarity: str | None = None
    tense: str | None = None
    facet: str | None = None
    statement: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    portability: str | None = None

    @field_validator("object")
    @classmethod
    def _object_names_something(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("object must not be blank")
        return value


class ReplyEnvelope(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    claims: list[ReplyClaim]


def decode_envelope(text: str, *, extractor: str) -> list[Proposal]:
    """The proposals in a model reply; raises :class:`ModelReplyError` when there is no envelope.

    ``extractor`` is stamped on every proposal (``model:<model name>``).
    """
    raw = find_envelope(text)
    try:
        envelope = ReplyEnvelope.model_validate_json(raw)
    except ValidationError as exc:
        raise ModelReplyError(f"claims envelope does not decode: {_describe(exc)}") from None
    return [_proposal(claim, extractor) for claim in envelope.claims]


def find_envelope(text: str) -> str:
    """The JSON text of the first object with a ``claims`` key among the first candidate braces."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(MAX_CANDIDATE_BRACES):
        if start < 0:
            break
        found = _object_at(decoder, text, start)
        if found is not None:
            return found
        start = text.find("{", start + 1)
    raise ModelReplyError("no claims envelope in the reply")


def _object_at(decoder: json.JSONDecoder, text: str, start: int) -> str | None:
    try:
        value, end = decoder.raw_decode(text, start)
    except ValueError:
        return None
    if isinstance(value, dict) and "claims" in value:
        return text[start:end]
    return None


def _describe(exc: ValidationError) -> str:
    """Where and what, never the offending values: they may quote the message."""
    problems = [
        f"{'.'.join(str(part) for part in error['loc']) or 'envelope'}: {error['type']}"
        for error in exc.errors(include_input=False, include_url=False)
    ]
    shown = "; ".join(problems[:5])
    more = len(problems) - 5
    return f"{shown}; and {more} more" if more > 0 else shown


def _proposal(claim: ReplyClaim, extractor: str) -> Proposal:
    return Proposal(
        subject=claim.subject,
        relation=claim.relation,
        object=claim.object,
        quote=claim.quote,
        polarity=claim.polarity,
        tense=claim.tense,
        extractor=extractor,
        facet=claim.facet,
        statement=claim.statement,
        confidence=claim.confidence,
        portability=claim.portability,
    )
