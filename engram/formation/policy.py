"""The formation policy: everything that can change what forms, and its version.

The version is a digest of the policy's content (never of credentials), stamped on every
candidate, refusal, belief and run. The content is the settings an operator chooses
(extractor kind, model identity, thresholds, caps, gate switches, enabled relations) and the
digests of what decides: the behaviour digest (the canonical output of the formation and
resolution cores over a pinned corpus, committed and checked by a test: :mod:`policies.
behaviour`), the prompt bytes and the vocabulary. The core reads no files, so those digests are
read or computed at the edge and passed in; nobody bumps a version by hand, a change that forms
differently cannot land without a new behaviour digest, and one that forms nothing differently
(a comment, a faster path) keeps the version. Two workers with the same policy decide the same way; a replay
under a different version writes a different generation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Literal

from engram.formation.proposals import UNRESOLVABLE_TERMS
from engram.formation.vocabulary import RELATIONS, SPECIAL_CATEGORY_RELATIONS, vocabulary_digest

ExtractorKind = Literal["deterministic", "model", "both"]

DETERMINISTIC_EXTRACTOR = "deterministic"
"""The name the deterministic arm stamps on its proposals. A name, not a version: what the arm
does is covered by the formation source digest in the policy version."""

RELATION_NAMES: tuple[str, ...] = tuple(relation.name for relation in RELATIONS)
"""Every relation of the vocabulary, in its order: what a policy may enable."""

DEFAULT_ENABLED_RELATIONS: tuple[str, ...] = tuple(
    name for name in RELATION_NAMES if name not in SPECIAL_CATEGORY_RELATIONS
)
"""What a policy enables unless it says otherwise: every relation but the special categories
(``has_condition``), which an operator enables by name, knowing they are health data."""

DEFAULT_SCAN_CEILING = 256
"""The most proposals one message is scanned for unless a policy says otherwise; a module
constant so that the deterministic arm's defaults can name it (a compiled dataclass has no
class-level field defaults to read)."""

DEFAULT_CONTEXT_MESSAGES = 8
DEFAULT_CONTEXT_CHARS = 4000
"""The model's context window unless a policy says otherwise (a policy without a model has
none)."""

_FLOAT_FIELDS = (
    "inferred_confidence_cap",
    "salience_threshold",
    "default_confidence",
    "explicit_confidence",
    "first_person_confidence",
    "second_hand_confidence_cap",
    "confidence_floor",
)

DEFAULT_HALF_LIVES_DAYS: tuple[tuple[str, float], ...] = (
    ("fact", 365.0),
    ("preference", 180.0),
    ("procedure_pointer", 90.0),
    ("relationship", 730.0),
    ("user_model_attr", 365.0),
)
"""How long a belief of each type keeps half its confidence without being reinforced: a
preference drifts sooner than a relationship."""

DEFAULT_TRANSIENT_DAYS: tuple[tuple[str, float], ...] = (("blocked_by", 14.0), ("has_status", 14.0))
"""Relations that state a passing state: unreinforced for this long, they have expired."""


@dataclass(frozen=True)
class FormationPolicy:
    extractor_kind: ExtractorKind = "deterministic"
    prompt_digest: str | None = None
    model_name: str | None = None
    model_origin: str | None = None
    behaviour_digest: str | None = None
    """The digest of what the formation and resolution cores do over a pinned corpus
    (``engram/policies/behaviour.sha256``, :mod:`policies.behaviour`); None only in tests and in
    computing that digest itself."""
    vocabulary_digest: str = field(default_factory=vocabulary_digest)
    unresolvable_terms: tuple[str, ...] = tuple(sorted(UNRESOLVABLE_TERMS))
    max_committed_per_consolidation: int = 12
    scan_ceiling: int = DEFAULT_SCAN_CEILING
    inferred_confidence_cap: float = 0.55
    salience_threshold: float = 0.45
    """Below this a new belief is ``provisional`` (weak evidence: a hedged pattern, something
    only affirmed or inferred) until corroborated; an explicit memory never is."""
    max_entity_name_bytes: int = 4096
    pii_kinds: tuple[str, ...] = ("iban", "national_id", "passport", "payment_card")
    default_confidence: float = 0.5
    explicit_confidence: float = 0.9
    enabled_relations: tuple[str, ...] = DEFAULT_ENABLED_RELATIONS
    context_messages: int = DEFAULT_CONTEXT_MESSAGES
    """How many earlier messages of the session the model sees beside a message (0: none)."""
    context_chars: int = DEFAULT_CONTEXT_CHARS
    """The most characters of those earlier messages, whole messages only."""
    first_person_confidence: float = 0.55
    """A plain first-person statement by the principal (no cue, present tense): the strongest
    automatic evidence, still within ``inferred_confidence_cap``."""
    second_hand_confidence_cap: float = 0.4
    """What the principal only affirmed, or what was inferred from others' words."""
    activation_corroborations: int = 2
    """Independent corroborations (evidence from other messages) that make a provisional
    belief ``active``."""
    half_lives_days: tuple[tuple[str, float], ...] = DEFAULT_HALF_LIVES_DAYS
    """(belief type, days): read-time decay from the last reinforcement."""
    confidence_floor: float = 0.1
    """Decay stops here: a reader asking for more than the floor no longer sees a belief that
    has decayed to it."""
    transient_days: tuple[tuple[str, float], ...] = DEFAULT_TRANSIENT_DAYS
    """(relation, days): a transient state expires this long after its last reinforcement."""

    def __post_init__(self) -> None:
        """Put every field in one canonical form, so equal policies have equal versions.

        Sets are sorted (relations in vocabulary order) and numbers that are fractions are
        floats: a policy that lists its PII kinds in another order, or writes ``1`` for
        ``1.0``, decides the same way and must not claim another version.
        """
        unknown = sorted(set(self.enabled_relations) - set(RELATION_NAMES))
        if unknown:
            raise ValueError(f"enabled_relations: not in the vocabulary: {', '.join(unknown)}")
        enabled = set(self.enabled_relations)
        _assign(self, "enabled_relations", tuple(n for n in RELATION_NAMES if n in enabled))
        _assign(self, "pii_kinds", tuple(sorted(set(self.pii_kinds))))
        _assign(self, "unresolvable_terms", tuple(sorted(set(self.unresolvable_terms))))
        for name in _FLOAT_FIELDS:
            _assign(self, name, float(getattr(self, name)))
        if not self.uses_model:  # no model, no context window: it decides nothing
            _assign(self, "context_messages", 0)
            _assign(self, "context_chars", 0)
        for name in ("half_lives_days", "transient_days"):
            pairs = {str(k): float(v) for k, v in getattr(self, name)}
            _assign(self, name, tuple(sorted(pairs.items())))

    @cached_property
    def version(self) -> str:
        """``formation@`` and the first 16 hex digits of the SHA-256 of the policy content.

        The content is every field, digests included, as canonical JSON (sorted keys, no
        spaces). Cached: the policy is frozen, and the digest is stamped on every candidate and
        refusal.
        """
        payload = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return "formation@" + hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def uses_model(self) -> bool:
        return self.extractor_kind in ("model", "both")


def _assign(policy: FormationPolicy, name: str, value: object) -> None:
    """Set a field of a frozen policy while it is being built, and only then."""
    object.__setattr__(policy, name, value)
