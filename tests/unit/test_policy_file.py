"""The policy file: what `policy show` prints reads back, formatting never changes the version,
values always do, and a bad file is refused naming the key."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from engram.formation.policy import DEFAULT_CONTEXT_CHARS, DEFAULT_CONTEXT_MESSAGES, FormationPolicy
from engram.policies.document import (
    PolicyDocument,
    PolicyFileError,
    parse_policy,
    policy_document,
    render_policy_yaml,
)

SOURCE = "s" * 64
PROMPT = "p" * 64
DIGESTS = {"behaviour_digest": SOURCE, "prompt_digest": PROMPT}
DIGEST_FIELDS = {"behaviour_digest", "prompt_digest", "vocabulary_digest"}

WRITTEN = b"""\
# thresholds first, for no reason
thresholds:
  salience_threshold: 0.4
  inferred_confidence_cap: 0.5
extractor:
  kind: model
model:
  name: qwen2.5-7b-instruct
  origin: http://127.0.0.1:8000
gates:
  pii_kinds: [payment_card, iban]
relations:
  enabled: [owns, lives_in, prefers]
"""

REFORMATTED = b"""\
relations: {enabled: [prefers, lives_in, owns]}   # a set: order is not meaning
gates:
    pii_kinds:
        - iban
        - payment_card
model: {origin: "http://127.0.0.1:8000", name: qwen2.5-7b-instruct}
extractor: {kind: model}
thresholds:
    inferred_confidence_cap: 0.50
    salience_threshold: 4.0e-1
"""


def version(raw: bytes) -> str:
    return parse_policy(raw, source="test.yaml").policy(**DIGESTS).version


def test_comments_key_order_and_indentation_do_not_change_the_version() -> None:
    assert version(REFORMATTED) == version(WRITTEN)


def test_a_threshold_in_the_file_changes_the_version() -> None:
    assert version(WRITTEN.replace(b"0.4", b"0.45")) != version(WRITTEN)


def test_the_shown_policy_reads_back_as_the_same_policy() -> None:
    policy = parse_policy(WRITTEN, source="test.yaml").policy(**DIGESTS)
    shown = render_policy_yaml(policy).encode()
    assert parse_policy(shown, source="shown").policy(**DIGESTS) == policy
    assert f"# version: {policy.version}" in shown.decode()


def test_a_file_that_states_every_default_has_the_version_of_an_empty_file() -> None:
    everything = yaml.safe_dump(policy_document(FormationPolicy())).encode()
    assert version(everything) == version(b"") == version(b"{}")
    assert parse_policy(b"", source="empty").policy(
        behaviour_digest=SOURCE, prompt_digest=None
    ) == (FormationPolicy(behaviour_digest=SOURCE))


def test_a_deterministic_policy_carries_no_prompt_digest() -> None:
    policy = parse_policy(b"", source="empty").policy(**DIGESTS)
    assert policy.prompt_digest is None


def test_every_policy_field_is_in_the_file_or_is_a_digest_of_the_build() -> None:
    """A field the file cannot state would be a setting nobody can see or replay."""
    changed = dataclasses.replace(
        parse_policy(WRITTEN, source="test.yaml").policy(**DIGESTS),
        unresolvable_terms=("it",),
        scan_ceiling=9,
        default_confidence=0.1,
    )
    restated = PolicyDocument.of(changed).policy(**DIGESTS)
    fields = {f.name for f in dataclasses.fields(FormationPolicy)} - DIGEST_FIELDS
    assert {name: getattr(restated, name) for name in fields} == {
        name: getattr(changed, name) for name in fields
    }


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        (b"thresholds:\n  salience: 0.4\n", "thresholds.salience: unknown key"),
        (b"caps:\n  scan_ceiling: 0\n", "caps.scan_ceiling: Input should be greater than"),
        (b"caps:\n  scan_ceiling: many\n", "caps.scan_ceiling: Input should be a valid integer"),
        (b"thresholds: {salience_threshold: yes}\n", "thresholds.salience_threshold: Input"),
        (b"thresholds: {salience_threshold: 1.5}\n", "less than or equal to 1 (got 1.5)"),
        (
            b"relations: {enabled: [owns, flies]}\n",
            "relations.enabled: not in the vocabulary: flies",
        ),
        (b"relations: {enabled: []}\n", "relations.enabled: List should have at least 1 item"),
        (b"gates: {pii_kinds: [ssn]}\n", "gates.pii_kinds: not a PII kind: ssn"),
        (b"extractor: {kind: llm}\n", "extractor.kind: Input should be 'deterministic'"),
        (b"extractor: {kind: model}\n", "model: required when extractor.kind is model"),
        (b"model: {name: m, origin: 'http://h:80'}\n", "extractor.kind deterministic runs no"),
        (b"salience_threshold: 0.4\n", "salience_threshold: unknown key"),
        (b"caps: {scan_ceiling: 1}\ncaps: {scan_ceiling: 2}\n", "at line 2: key 'caps' is given"),
        (b"caps: [1\n", "is not valid YAML at line 2"),
        (b"- caps\n", "must be a mapping of sections"),
        (b"\xff\xfe", "is not UTF-8"),
    ],
)
def test_a_bad_file_is_refused_naming_the_file_and_the_problem(raw: bytes, named: str) -> None:
    with pytest.raises(PolicyFileError) as refused:
        parse_policy(raw, source="bad.yaml")
    assert str(refused.value).startswith("policy file bad.yaml: ")
    assert named in str(refused.value)


@pytest.mark.parametrize(
    "model",
    [
        b"{name: m, origin: 'https://user:hunter2@api.example.com:443'}",
        b"{name: m, origin: 'https://api.example.com/v1?key=hunter2'}",
        b"{name: m, origin: 'http://h:80', api_key: hunter2}",
    ],
)
def test_a_credential_in_the_model_section_is_refused_without_being_repeated(model: bytes) -> None:
    with pytest.raises(PolicyFileError) as refused:
        parse_policy(b"extractor: {kind: model}\nmodel: " + model, source="bad.yaml")
    assert "model." in str(refused.value)
    assert "hunter2" not in str(refused.value)


def test_a_model_policy_file_gets_the_default_context_window_and_may_change_it() -> None:
    model = "extractor: {kind: model}\nmodel: {name: m, origin: 'http://127.0.0.1:8000'}\n"
    plain = parse_policy(model.encode(), source="p.yaml").policy(
        behaviour_digest=None, prompt_digest="d"
    )
    assert (plain.context_messages, plain.context_chars) == (
        DEFAULT_CONTEXT_MESSAGES,
        DEFAULT_CONTEXT_CHARS,
    )
    narrow = parse_policy(
        (model + "context: {messages: 2, chars: 500}\n").encode(), source="p.yaml"
    ).policy(behaviour_digest=None, prompt_digest="d")
    assert (narrow.context_messages, narrow.context_chars) == (2, 500)
    assert narrow.version != plain.version
    deterministic = parse_policy(b"", source="p.yaml").policy(
        behaviour_digest=None, prompt_digest=None
    )
    assert (deterministic.context_messages, deterministic.context_chars) == (0, 0)


def test_the_confidence_section_sets_strengths_promotion_and_decay() -> None:
    raw = (
        b"confidence:\n"
        b"  first_person_confidence: 0.5\n"
        b"  activation_corroborations: 3\n"
        b"  confidence_floor: 0.2\n"
        b"  half_lives_days: {preference: 30}\n"
        b"  transient_days: {has_status: 7}\n"
    )
    policy = parse_policy(raw, source="p.yaml").policy(behaviour_digest=None, prompt_digest=None)
    assert (policy.first_person_confidence, policy.activation_corroborations) == (0.5, 3)
    assert policy.half_lives_days == (("preference", 30.0),)
    assert policy.transient_days == (("has_status", 7.0),)
    assert PolicyDocument.of(policy).policy(behaviour_digest=None, prompt_digest=None) == policy


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"confidence: {half_lives_days: {mood: 3}}\n", "not a belief type: mood"),
        (b"confidence: {transient_days: {feels: 3}}\n", "not in the vocabulary: feels"),
        (b"confidence: {activation_corroborations: 0}\n", "greater than or equal to 1"),
    ],
)
def test_a_confidence_section_with_an_unknown_name_or_a_bad_number_is_refused(
    raw: bytes, expected: str
) -> None:
    with pytest.raises(PolicyFileError, match=expected):
        parse_policy(raw, source="p.yaml")
