"""The formation policy: everything that can change what forms, and its version.

The version is a digest of the policy's content (never of credentials), stamped on every
candidate, refusal, belief and run. Two workers with the same policy decide the same way; a
replay under a different version writes a different generation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Literal

from formation.proposals import UNRESOLVABLE_TERMS
from formation.vocabulary import vocabulary_digest

ExtractorKind = Literal["deterministic", "model", "both"]

DETERMINISTIC_EXTRACTOR_VERSION = "deterministic@1"
GATE_RULES_VERSION = "gates@2"
"""Bump when a pattern in the secret, PII, transient or injection gates changes: the gates'
code is part of what decides, so it is part of the policy version."""


@dataclass(frozen=True)
class FormationPolicy:
    extractor_kind: ExtractorKind = "deterministic"
    deterministic_version: str = DETERMINISTIC_EXTRACTOR_VERSION
    prompt_digest: str | None = None
    model_name: str | None = None
    model_origin: str | None = None
    vocabulary_digest: str = field(default_factory=vocabulary_digest)
    unresolvable_terms: tuple[str, ...] = tuple(sorted(UNRESOLVABLE_TERMS))
    max_committed_per_consolidation: int = 12
    scan_ceiling: int = 256
    inferred_confidence_cap: float = 0.55
    salience_threshold: float = 0.3
    max_entity_name_bytes: int = 4096
    pii_kinds: tuple[str, ...] = ("payment_card", "national_id", "iban", "passport")
    gate_rules_version: str = GATE_RULES_VERSION
    default_confidence: float = 0.5
    explicit_confidence: float = 0.9

    @cached_property
    def version(self) -> str:
        """``formation@`` and the first 16 hex digits of the SHA-256 of the policy content.

        Cached: the policy is frozen, and the digest is stamped on every candidate and refusal.
        """
        payload = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return "formation@" + hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def uses_model(self) -> bool:
        return self.extractor_kind in ("model", "both")
