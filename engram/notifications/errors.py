"""The failures of notifications, each with its own code (``infra.errors``)."""

from __future__ import annotations

from engram.infra.errors import EngramFailure


class DestinationRefused(EngramFailure, ValueError):
    """An endpoint's URL, or an address its host resolves to, is not one Engram sends to:
    not https, credentials in it, a private, loopback or link-local address that is not allowed
    explicitly. The message says which rule, and how to allow it on purpose."""

    code = "webhook_destination_refused"


class UnknownEndpoint(EngramFailure, LookupError):
    """No such endpoint in this tenant (the same answer as one that is another tenant's)."""

    code = "webhook_endpoint_unknown"


class UnknownDelivery(EngramFailure, LookupError):
    """No such delivery in this tenant."""

    code = "webhook_delivery_unknown"


class SecretsUnavailable(EngramFailure, LookupError):
    """No key-encryption key is configured, so a signing secret can be neither stored (it is
    kept only wrapped) nor read back to sign with."""

    code = "webhook_secrets_unavailable"


class DestinationUnresolved(DestinationRefused):
    """The endpoint's host does not resolve (now): refused at registration, retried at send."""

    code = "webhook_destination_unresolved"
    retriable = True
    exit_code = 1


class UnknownNotificationType(EngramFailure, ValueError):
    """An endpoint subscribed to a kind of notification Engram does not send."""

    code = "webhook_type_unknown"
