"""Reading a model reply: the first claims envelope is found and decoded strictly; a reply with
no envelope is an error, never an empty result."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engram.streams.model.reply import MAX_CANDIDATE_BRACES, ModelReplyError, decode_envelope

EXTRACTOR = "model:test-model"


def claim(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "subject": "I",
        "relation": "lives_in",
        "object": "Lisbon",
        "quote": "I live in Lisbon",
        "polarity": "assert",
        "tense": "present",
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not ...}


def envelope(*claims: dict[str, Any]) -> str:
    return json.dumps({"claims": list(claims)})


def decode_error(text: str) -> str:
    with pytest.raises(ModelReplyError) as raised:
        decode_envelope(text, extractor=EXTRACTOR)
    return str(raised.value)


class TestTheEnvelopeIsFoundAmongStrayText:
    def test_a_bare_envelope_decodes_to_proposals(self) -> None:
        [proposal] = decode_envelope(envelope(claim()), extractor=EXTRACTOR)
        assert (proposal.subject, proposal.relation, proposal.object) == ("I", "lives_in", "Lisbon")
        assert (proposal.polarity, proposal.tense) == ("assert", "present")
        assert proposal.extractor == EXTRACTOR

    def test_a_prefixed_reply_decodes(self) -> None:
        text = "Sure! Here are the claims I found:\n" + envelope(claim())
        assert len(decode_envelope(text, extractor=EXTRACTOR)) == 1

    def test_a_code_fenced_reply_decodes(self) -> None:
        text = "```json\n" + json.dumps({"claims": [claim()]}, indent=2) + "\n```\n"
        assert len(decode_envelope(text, extractor=EXTRACTOR)) == 1

    def test_braces_before_the_envelope_are_skipped(self) -> None:
        text = "Format: {subject, relation} {not json either}\n" + envelope(claim())
        assert len(decode_envelope(text, extractor=EXTRACTOR)) == 1

    def test_an_object_without_claims_is_skipped_for_the_one_inside_it(self) -> None:
        text = json.dumps({"result": {"claims": [claim()]}})
        assert len(decode_envelope(text, extractor=EXTRACTOR)) == 1

    def test_the_first_envelope_wins(self) -> None:
        text = envelope(claim(object="Lisbon")) + "\n" + envelope(claim(object="Porto"))
        [proposal] = decode_envelope(text, extractor=EXTRACTOR)
        assert proposal.object == "Lisbon"

    def test_an_envelope_after_too_many_braces_is_not_found(self) -> None:
        text = "{" * MAX_CANDIDATE_BRACES + " " + envelope(claim())
        assert decode_error(text) == "no claims envelope in the reply"

    def test_an_envelope_at_the_last_candidate_brace_is_found(self) -> None:
        text = "{ " * (MAX_CANDIDATE_BRACES - 1) + envelope(claim())
        assert len(decode_envelope(text, extractor=EXTRACTOR)) == 1


class TestAnEmptyEnvelopeIsNotAnError:
    def test_no_claims_means_the_message_asserts_nothing(self) -> None:
        assert decode_envelope('{"claims": []}', extractor=EXTRACTOR) == []


class TestAReplyWithoutAnEnvelopeIsAnError:
    @pytest.mark.parametrize(
        "text",
        [
            "",
            "I could not find any claims.",
            "[]",
            '{"facts": []}',
            '{"claims": [ }',
            "```json\n{}\n```",
        ],
    )
    def test_it_raises_rather_than_returning_nothing(self, text: str) -> None:
        assert decode_error(text) == "no claims envelope in the reply"


class TestTheEnvelopeIsDecodedStrictly:
    def test_an_unknown_field_in_a_claim_is_an_error(self) -> None:
        assert "claims.0.reason: extra_forbidden" in decode_error(envelope(claim(reason="x")))

    def test_an_unknown_field_beside_claims_is_an_error(self) -> None:
        text = json.dumps({"claims": [], "notes": "none"})
        assert "notes: extra_forbidden" in decode_error(text)

    def test_claims_that_are_not_a_list_are_an_error(self) -> None:
        assert "claims: list_type" in decode_error('{"claims": null}')

    @pytest.mark.parametrize("field", ["subject", "relation", "object", "quote"])
    def test_a_missing_required_field_is_an_error(self, field: str) -> None:
        assert f"claims.0.{field}: missing" in decode_error(envelope(claim(**{field: ...})))

    @pytest.mark.parametrize(
        ("field", "value"),
        [("subject", 1), ("quote", ["I live"]), ("confidence", "0.9"), ("facet", 3)],
    )
    def test_a_wrong_type_is_an_error(self, field: str, value: object) -> None:
        assert f"claims.0.{field}" in decode_error(envelope(claim(**{field: value})))

    @pytest.mark.parametrize("confidence", [-0.1, 1.5])
    def test_a_confidence_outside_zero_to_one_is_an_error(self, confidence: float) -> None:
        assert "claims.0.confidence" in decode_error(envelope(claim(confidence=confidence)))

    def test_a_blank_object_is_an_error(self) -> None:
        assert "claims.0.object" in decode_error(envelope(claim(object="  ")))

    def test_an_end_longer_than_a_claim_end_is_an_error(self) -> None:
        assert "claims.0.subject" in decode_error(envelope(claim(subject="x" * 5000)))

    def test_errors_name_where_never_what(self) -> None:
        secret = "my passport number is X1234567"
        message = decode_error(envelope(claim(quote=7, leaked=secret)))
        assert secret not in message
        assert "X1234567" not in message

    def test_many_problems_are_summarised(self) -> None:
        message = decode_error(envelope(*[claim(extra=i) for i in range(9)]))
        assert message.endswith("and 4 more")


class TestProposalsKeepTheModelsWords:
    def test_the_quote_is_passed_on_verbatim_for_admission_to_verify(self) -> None:
        [proposal] = decode_envelope(
            envelope(claim(quote="  i LIVE in lisbon ")), extractor=EXTRACTOR
        )
        assert proposal.quote == "  i LIVE in lisbon "

    def test_optional_fields_are_carried(self) -> None:
        text = envelope(
            claim(
                relation="prefers",
                facet="editor",
                object="vim",
                statement="I prefer vim",
                confidence=1,
                portability="portable",
            )
        )
        [proposal] = decode_envelope(text, extractor=EXTRACTOR)
        assert proposal.facet == "editor"
        assert proposal.statement == "I prefer vim"
        assert proposal.confidence == 1.0
        assert proposal.portability == "portable"
        assert proposal.scope is None

    def test_missing_polarity_and_tense_stay_missing_for_admission_to_refuse(self) -> None:
        [proposal] = decode_envelope(envelope(claim(polarity=..., tense=...)), extractor=EXTRACTOR)
        assert (proposal.polarity, proposal.tense) == (None, None)

    def test_unknown_polarity_and_tense_are_kept_verbatim(self) -> None:
        text = envelope(claim(polarity="negated", tense="ongoing"))
        [proposal] = decode_envelope(text, extractor=EXTRACTOR)
        assert (proposal.polarity, proposal.tense) == ("negated", "ongoing")

    def test_claims_keep_their_order(self) -> None:
        objects = ["Lisbon", "Porto", "Faro"]
        text = envelope(*[claim(object=o) for o in objects])
        assert [p.object for p in decode_envelope(text, extractor=EXTRACTOR)] == objects
