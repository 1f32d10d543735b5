"""A model answer is found again only for the same model, the same request and the same input:
the random fence is not part of the key, the role and what the policy redacts are."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import SecretStr

from engram.formation.vocabulary import RELATIONS
from engram.policies.prompt import load_extraction_prompt
from engram.schemas.common import Role
from engram.schemas.episodes import Message
from engram.streams.model.context import ContextMessage
from engram.streams.model.extractor import ModelExtractor

ENDPOINT = "http://127.0.0.1:9/v1"


def extractor(**overrides: Any) -> ModelExtractor:
    options: dict[str, Any] = {
        "endpoint": ENDPOINT,
        "model_name": "m",
        "api_key": SecretStr("k"),
        "allowlist": ["http://127.0.0.1:9"],
        "timeout_s": 1.0,
        "max_response_bytes": 1024,
        "prompt": load_extraction_prompt(None),
    }
    options.update(overrides)
    return ModelExtractor(**options)


def message(content: str, role: str = "user") -> Message:
    return Message(ordinal=0, role=role, content=content)


def test_the_same_input_has_the_same_digest_whatever_fence_is_drawn() -> None:
    a = extractor(token_hex=lambda n: "a" * (2 * n))
    b = extractor(token_hex=lambda n: "b" * (2 * n))
    text = message("I live in Lisbon.")
    assert a.input_digest(text) == b.input_digest(text)
    assert a.request_digest == b.request_digest


def test_another_role_or_other_words_are_another_input() -> None:
    arm = extractor()
    base = arm.input_digest(message("I live in Lisbon."))
    assert base != arm.input_digest(message("I live in Lisbon.", role="assistant"))
    assert base != arm.input_digest(message("I live in Porto."))


def test_the_key_covers_the_redacted_text_that_is_sent_not_the_secret() -> None:
    arm = extractor()
    one = arm.input_digest(message("my iban is DE89370400440532013000 ok"))
    other = arm.input_digest(message("my iban is GB29NWBK60161331926819 ok"))
    assert one == other, "both are sent as the same redacted text"
    unredacted = extractor(pii_kinds=())
    assert unredacted.input_digest(message("my iban is DE89370400440532013000 ok")) != (
        unredacted.input_digest(message("my iban is GB29NWBK60161331926819 ok"))
    )


def test_offering_other_relations_is_another_request() -> None:
    fewer = extractor(relations=tuple(r for r in RELATIONS if r.name != "works_at"))
    assert fewer.request_digest != extractor().request_digest


def test_another_episode_date_or_context_is_another_input() -> None:
    arm = extractor()
    text = message("Yes, that one.")
    context = [ContextMessage(Role.ASSISTANT, "Was it the red bike?")]
    base = arm.input_digest(text, context, date(2025, 1, 2))
    assert base == arm.input_digest(text, list(context), date(2025, 1, 2))
    assert base != arm.input_digest(text, context, date(2025, 1, 3))
    assert base != arm.input_digest(text, (), date(2025, 1, 2))
    assert base != arm.input_digest(
        text, [ContextMessage(Role.ASSISTANT, "Was it the blue bike?")], date(2025, 1, 2)
    )
