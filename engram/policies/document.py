"""The policy file: the formation policy as YAML, read, validated and written back.

A policy file holds what an operator chooses: the extractor kind, the model's identity (name
and endpoint origin, never a credential), thresholds, caps, gate switches and the enabled
relations. Every key has the default of :class:`FormationPolicy`, so a file says only what it
changes; unknown keys are errors, because a misspelt threshold that silently keeps its default
would form under a policy nobody wrote. ``engram policy show`` prints this same format, and its
output is a valid file. The digests of code and data (formation source, prompt, vocabulary) are
no file's to set: they come from the build and are passed in when the policy is made.

The version is computed from the policy, not from the file's text, so comments, key order and
indentation never change it, while any value does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from engram.formation.admission import MAX_NAME_BYTES
from engram.formation.pii import PII_KINDS
from engram.formation.policy import (
    DEFAULT_CONTEXT_CHARS,
    DEFAULT_CONTEXT_MESSAGES,
    DEFAULT_ENABLED_RELATIONS,
    RELATION_NAMES,
    ExtractorKind,
    FormationPolicy,
)
from engram.formation.vocabulary import BeliefType
from engram.infra.errors import EngramFailure

_DEFAULT = FormationPolicy()
_ORIGIN = re.compile(r"https?://(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+):[0-9]{1,5}")
_SHOWN_INPUT_CHARS = 80


class PolicyFileError(EngramFailure, ValueError):
    """The policy file is unreadable or invalid; the message names the file, key and value."""

    code = "invalid_policy_file"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ExtractorSection(_Section):
    kind: ExtractorKind = _DEFAULT.extractor_kind


class ModelSection(_Section):
    """Which model answers, and where: the identity, never how to authenticate."""

    name: str = Field(min_length=1)
    origin: str

    @field_validator("origin")
    @classmethod
    def _is_origin(cls, origin: str) -> str:
        if not _ORIGIN.fullmatch(origin):
            raise ValueError(
                "must be an origin: scheme://host:port, lower-case host, explicit port, "
                "no path and no credentials"
            )
        return origin


Fraction = Annotated[float, Field(ge=0.0, le=1.0)]


class ThresholdSection(_Section):
    inferred_confidence_cap: Fraction = _DEFAULT.inferred_confidence_cap
    salience_threshold: Fraction = _DEFAULT.salience_threshold
    default_confidence: Fraction = _DEFAULT.default_confidence
    explicit_confidence: Fraction = _DEFAULT.explicit_confidence


class ConfidenceSection(_Section):
    """How strong evidence must be, and how fast unreinforced beliefs fade at read time."""

    first_person_confidence: Fraction = _DEFAULT.first_person_confidence
    second_hand_confidence_cap: Fraction = _DEFAULT.second_hand_confidence_cap
    activation_corroborations: int = Field(_DEFAULT.activation_corroborations, ge=1)
    confidence_floor: Fraction = _DEFAULT.confidence_floor
    half_lives_days: dict[str, Annotated[float, Field(gt=0)]] = dict(_DEFAULT.half_lives_days)
    transient_days: dict[str, Annotated[float, Field(gt=0)]] = dict(_DEFAULT.transient_days)

    @field_validator("half_lives_days")
    @classmethod
    def _known_types(cls, days: dict[str, float]) -> dict[str, float]:
        _refuse_unknown(list(days), frozenset(t.value for t in BeliefType), "not a belief type")
        return days

    @field_validator("transient_days")
    @classmethod
    def _known_relations(cls, days: dict[str, float]) -> dict[str, float]:
        _refuse_unknown(list(days), frozenset(RELATION_NAMES), "not in the vocabulary")
        return days


class CapSection(_Section):
    max_committed_per_consolidation: int = Field(_DEFAULT.max_committed_per_consolidation, ge=1)
    scan_ceiling: int = Field(_DEFAULT.scan_ceiling, ge=1)
    max_entity_name_bytes: int = Field(_DEFAULT.max_entity_name_bytes, ge=1, le=MAX_NAME_BYTES)


class ContextSection(_Section):
    """The model's context window: earlier messages of the session sent beside a message."""

    messages: int = Field(DEFAULT_CONTEXT_MESSAGES, ge=0, le=64)
    chars: int = Field(DEFAULT_CONTEXT_CHARS, ge=0, le=64_000)


class GateSection(_Section):
    pii_kinds: list[str] = list(_DEFAULT.pii_kinds)

    @field_validator("pii_kinds")
    @classmethod
    def _known_kinds(cls, kinds: list[str]) -> list[str]:
        _refuse_unknown(kinds, PII_KINDS, "not a PII kind")
        return sorted(set(kinds))


class AdmissionSection(_Section):
    unresolvable_terms: list[str] = list(_DEFAULT.unresolvable_terms)

    @field_validator("unresolvable_terms")
    @classmethod
    def _sorted_terms(cls, terms: list[str]) -> list[str]:
        return sorted(set(terms))


class RelationSection(_Section):
    enabled: list[str] = Field(list(DEFAULT_ENABLED_RELATIONS), min_length=1)
    """Every relation but the special categories (``has_condition``) unless the file names
    them: health forms only where an operator enabled it."""

    @field_validator("enabled")
    @classmethod
    def _known_relations(cls, names: list[str]) -> list[str]:
        _refuse_unknown(names, frozenset(RELATION_NAMES), "not in the vocabulary")
        return [name for name in RELATION_NAMES if name in set(names)]


def _refuse_unknown(values: list[str], known: frozenset[str], what: str) -> None:
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"{what}: {', '.join(unknown)}")


class PolicyDocument(_Section):
    """The policy file's content; :meth:`policy` makes the policy with the build's digests."""

    extractor: ExtractorSection = ExtractorSection()
    model: ModelSection | None = None
    thresholds: ThresholdSection = ThresholdSection()
    confidence: ConfidenceSection = ConfidenceSection()
    caps: CapSection = CapSection()
    context: ContextSection = ContextSection()
    gates: GateSection = GateSection()
    admission: AdmissionSection = AdmissionSection()
    relations: RelationSection = RelationSection()

    @model_validator(mode="after")
    def _model_when_used(self) -> PolicyDocument:
        uses_model = self.extractor.kind != "deterministic"
        if uses_model and self.model is None:
            raise ValueError(f"model: required when extractor.kind is {self.extractor.kind}")
        if not uses_model and self.model is not None:
            raise ValueError("model: set, but extractor.kind deterministic runs no model")
        return self

    @classmethod
    def of(cls, policy: FormationPolicy) -> PolicyDocument:
        """The file that states ``policy``; its digests stay behind."""
        model = (
            ModelSection(name=policy.model_name, origin=policy.model_origin)
            if policy.model_name is not None and policy.model_origin is not None
            else None
        )
        return cls(
            extractor=ExtractorSection(kind=policy.extractor_kind),
            model=model,
            thresholds=ThresholdSection(**_fields(policy, ThresholdSection)),
            confidence=ConfidenceSection(
                first_person_confidence=policy.first_person_confidence,
                second_hand_confidence_cap=policy.second_hand_confidence_cap,
                activation_corroborations=policy.activation_corroborations,
                confidence_floor=policy.confidence_floor,
                half_lives_days=dict(policy.half_lives_days),
                transient_days=dict(policy.transient_days),
            ),
            caps=CapSection(**_fields(policy, CapSection)),
            context=ContextSection(messages=policy.context_messages, chars=policy.context_chars),
            gates=GateSection(pii_kinds=list(policy.pii_kinds)),
            admission=AdmissionSection(unresolvable_terms=list(policy.unresolvable_terms)),
            relations=RelationSection(enabled=list(policy.enabled_relations)),
        )

    def policy(self, *, behaviour_digest: str | None, prompt_digest: str | None) -> FormationPolicy:
        """The policy this file states, under a build whose digests are given."""
        return FormationPolicy(
            extractor_kind=self.extractor.kind,
            prompt_digest=prompt_digest if self.uses_model else None,
            model_name=self.model.name if self.model else None,
            model_origin=self.model.origin if self.model else None,
            behaviour_digest=behaviour_digest,
            unresolvable_terms=tuple(self.admission.unresolvable_terms),
            pii_kinds=tuple(self.gates.pii_kinds),
            enabled_relations=tuple(self.relations.enabled),
            context_messages=self.context.messages,
            context_chars=self.context.chars,
            **self.thresholds.model_dump(),
            first_person_confidence=self.confidence.first_person_confidence,
            second_hand_confidence_cap=self.confidence.second_hand_confidence_cap,
            activation_corroborations=self.confidence.activation_corroborations,
            confidence_floor=self.confidence.confidence_floor,
            half_lives_days=tuple(self.confidence.half_lives_days.items()),
            transient_days=tuple(self.confidence.transient_days.items()),
            **self.caps.model_dump(),
        )

    @property
    def uses_model(self) -> bool:
        return self.extractor.kind != "deterministic"


def _fields(policy: FormationPolicy, section: type[_Section]) -> dict[str, Any]:
    return {name: getattr(policy, name) for name in section.model_fields}


def load_policy_file(path: Path) -> PolicyDocument:
    """Read and validate a policy file; raises :class:`PolicyFileError` naming the problem."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise PolicyFileError(f"policy file {path}: cannot be read ({exc.strerror})") from None
    return parse_policy(raw, source=str(path))


def parse_policy(raw: bytes, *, source: str) -> PolicyDocument:
    """Validate policy file bytes; every error names ``source`` and the offending key."""
    try:
        document = yaml.load(raw.decode("utf-8"), Loader=_UniqueKeyLoader)
    except UnicodeDecodeError:
        raise PolicyFileError(f"policy file {source}: is not UTF-8") from None
    except yaml.YAMLError as exc:
        raise PolicyFileError(f"policy file {source}: is not valid YAML{_where(exc)}") from None
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise PolicyFileError(f"policy file {source}: must be a mapping of sections")
    try:
        return PolicyDocument.model_validate(document)
    except ValidationError as exc:
        problems = "; ".join(_describe(error) for error in exc.errors())
        raise PolicyFileError(f"policy file {source}: {problems}") from None


def _where(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    line = f" at line {mark.line + 1}" if mark is not None else ""
    return f"{line}: {problem}" if problem else line


def _describe(error: ErrorDetails) -> str:
    """One problem, named by its dotted key; the value is shown unless it is a model's.

    A model value in the wrong place may be a credential (a URL with a password, a key pasted
    as the origin), and an error message is the kind of text that ends up in logs.
    """
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown key"
    message = error["msg"].removeprefix("Value error, ")
    if not where or error["loc"][0] == "model":
        return f"{where}: {message}" if where else message
    shown = repr(error["input"])
    if len(shown) > _SHOWN_INPUT_CHARS:
        shown = shown[:_SHOWN_INPUT_CHARS] + "…"
    return f"{where}: {message} (got {shown})"


class _UniqueKeyLoader(yaml.SafeLoader):
    """The safe loader, refusing a key given twice: the second would silently win."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def render_policy_yaml(policy: FormationPolicy) -> str:
    """The policy as a policy file, headed by comments with its version and digests."""
    header = (
        "# Engram formation policy; `engram policy show --policy FILE` reads this format.",
        f"# version: {policy.version}",
        "# The version also covers these digests of the build, which no file sets:",
        f"#   behaviour: {policy.behaviour_digest or 'none'}",
        f"#   prompt: {policy.prompt_digest or 'none (no model)'}",
        f"#   vocabulary: {policy.vocabulary_digest}",
    )
    body = yaml.safe_dump(
        policy_document(policy), sort_keys=False, allow_unicode=True, default_flow_style=False
    )
    return "\n".join(header) + "\n" + body


def policy_document(policy: FormationPolicy) -> dict[str, Any]:
    """The policy file's content as plain data (sections in a fixed order)."""
    return PolicyDocument.of(policy).model_dump(mode="json", exclude_none=True)


def policy_summary(policy: FormationPolicy) -> dict[str, Any]:
    """Version, file content and digests: what ``engram policy show --json`` prints."""
    return {
        "version": policy.version,
        "policy": policy_document(policy),
        "digests": {
            "behaviour": policy.behaviour_digest,
            "prompt": policy.prompt_digest,
            "vocabulary": policy.vocabulary_digest,
        },
    }
