"""One attempt at one delivery: check the destination again, sign, send, say what happened.

Shared by the notifier's sender loop and ``engram webhooks test``. Never inside a transaction:
the caller has only leased the delivery (:mod:`engram.notifications.queue`).
"""

from __future__ import annotations

import time
import uuid

import httpx

from engram.notifications.destinations import (
    DestinationPolicy,
    checked_addresses,
    parse_destination,
)
from engram.notifications.errors import DestinationRefused, DestinationUnresolved
from engram.notifications.outcomes import status_failure
from engram.notifications.queue import Failure
from engram.notifications.signing import signed_headers
from engram.notifications.transport import HttpTransport


class Sender:
    def __init__(self, policy: DestinationPolicy, transport: HttpTransport) -> None:
        self._policy = policy
        self._transport = transport

    async def send(
        self, *, url: str, message_id: uuid.UUID, body: bytes, keys: list[bytes]
    ) -> tuple[int | None, Failure | None]:
        """POST ``body`` to ``url`` signed with ``keys``: the status (None when there was no
        answer) and the failure, None when delivered."""
        try:
            destination = parse_destination(url)
            addresses = await checked_addresses(self._policy, destination)
        except DestinationUnresolved as unresolved:
            return None, Failure(None, str(unresolved), final=False)
        except DestinationRefused as refused:
            return None, Failure(None, str(refused), final=True, disable=str(refused))
        headers = signed_headers(keys, str(message_id), int(time.time()), body)
        try:
            status = await self._transport.post(destination, addresses[0], headers, body)
        except TimeoutError:
            return None, Failure(None, "timed out", final=False)
        except httpx.HTTPError as error:
            return None, Failure(None, f"no answer: {type(error).__name__}", final=False)
        except OSError as error:
            return None, Failure(
                None, f"no answer: {error.strerror or type(error).__name__}", final=False
            )
        return status, status_failure(status)
