"""Where message text may go: the model endpoint's origin and the allow-list it must be on.

Kept apart from the extractor (which imports the openai client, ~1 s at start-up) so that the
policy wiring can name a model's origin without loading it.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from engram.infra.errors import EngramFailure

_DEFAULT_PORTS = {"http": 80, "https": 443}


class ModelConfigurationError(EngramFailure, ValueError):
    """The model settings cannot make an extractor (missing or malformed endpoint or name)."""

    code = "model_configuration_invalid"


class ModelEndpointNotAllowed(ModelConfigurationError):
    """The endpoint's origin is not allow-listed, so message text may not be sent to it."""

    code = "model_endpoint_not_allowed"

    def __init__(self, origin: str) -> None:
        super().__init__(
            f"model endpoint origin {origin} is not in ENGRAM_MODEL_ALLOWLIST; message text is "
            "only sent to allow-listed origins"
        )
        self.origin = origin


def endpoint_origin(url: str, *, setting: str = "ENGRAM_MODEL_ENDPOINT") -> str:
    """``scheme://host:port`` of an http(s) URL, with the scheme's default port made explicit."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ModelConfigurationError(f"{setting} is not a valid URL") from None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ModelConfigurationError(f"{setting} must be an http or https URL with a host")
    if parts.username is not None or parts.password is not None:
        raise ModelConfigurationError(
            f"{setting} must not carry credentials; use ENGRAM_MODEL_API_KEY"
        )
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}:{port or _DEFAULT_PORTS[parts.scheme]}"


def allowed_origins(allowlist: Sequence[str]) -> frozenset[str]:
    """The allow-list as normalised origins; an entry with a path or query is an error."""
    origins = set()
    for entry in allowlist:
        parts = urlsplit(entry.strip())
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ModelConfigurationError(
                "ENGRAM_MODEL_ALLOWLIST entries must be origins (scheme://host:port)"
            )
        origins.add(endpoint_origin(entry, setting="ENGRAM_MODEL_ALLOWLIST"))
    return frozenset(origins)
