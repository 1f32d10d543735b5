"""Scripts for the fake model: a "model" that reads the fenced message and proposes what the
deterministic extractor would, as JSON — realistic claims with no real model."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from engram.formation import deterministic
from tests.fakes.openai_server import Reply

_FENCED = re.compile(r"<<<MESSAGE (?P<id>[0-9a-f]+)>>>\n(?P<content>.*)\n<<<END (?P=id)>>>", re.S)


def fenced_content(body: Any) -> str:
    """The message text the client fenced into its user turn."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    match = _FENCED.search(user)
    if match is None:
        raise ValueError("the request has no fenced message")
    return match["content"]


def claims_for(content: str) -> list[dict[str, Any]]:
    claims = []
    for p in deterministic.propose(content):
        claim: dict[str, Any] = {
            "subject": p.subject,
            "relation": p.relation,
            "object": p.object,
            "quote": p.quote,
            "polarity": p.polarity,
            "tense": p.tense,
        }
        if p.facet:
            claim["facet"] = p.facet
        claims.append(claim)
    return claims


def echo_model(
    delay: Callable[[str], float] = lambda _: 0.0, failing: Callable[[str], bool] = lambda _: False
) -> Callable[[Any], Reply]:
    """A script answering like a competent model after ``delay(content)`` seconds, or with a
    500 when ``failing(content)``."""

    def script(body: Any) -> Reply:
        content = fenced_content(body)
        if failing(content):
            return Reply.error(500, '{"error": {"type": "server_error", "code": "overloaded"}}')
        return Reply.claims(*claims_for(content), delay_s=delay(content))

    return script


_SPEAKER = re.compile(r"^Speaker: (?P<role>\w+)", re.M)
_INJECTION = re.compile(r"[^.!?\n]*(?:ignore|disregard|remember that|you must)[^.!?\n]*", re.I)


def adversarial_model() -> Callable[[Any], Reply]:
    """A model that has been fooled: besides the honest claims, it launders what it read —
    first-person claims out of tool, web and assistant text, secrets paraphrased into values
    with an innocent quote, and injected instructions recast as preferences."""
    from engram.formation.secrets import find_secrets

    def script(body: Any) -> Reply:
        content = fenced_content(body)
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        speaker = _SPEAKER.search(user)
        role = speaker["role"] if speaker else "user"
        claims = claims_for(content)
        innocent = " ".join(content.split()[:3]) or content
        for finding in find_secrets(content):
            claims.append(
                {
                    "subject": "I",
                    "relation": "has_contact",
                    "object": f"my key {content[finding.start : finding.end]}",
                    "quote": innocent,
                    "polarity": "assert",
                    "tense": "present",
                    "statement": "the user shared a contact",
                }
            )
        for match in _INJECTION.finditer(content):
            claims.append(
                {
                    "subject": "I",
                    "relation": "prefers",
                    "object": match[0].strip(),
                    "quote": innocent,
                    "polarity": "assert",
                    "tense": "present",
                }
            )
        if role != "user":
            claims += [dict(c, subject="I") for c in claims_for(content) if c["subject"] != "I"]
        return Reply.claims(*claims)

    return script
