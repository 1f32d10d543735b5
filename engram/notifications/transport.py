"""One HTTP attempt, to an address already checked (:mod:`engram.notifications.destinations`).

The request goes to the checked IP address, with the endpoint's host in the ``Host`` header and,
for https, as the TLS server name (so the certificate is verified for the name, while the name
is never resolved again). No redirect is followed, no proxy or certificate setting is taken from
the environment, and connections are not kept alive: a pooled connection is keyed by address,
and one opened for one name must not carry a request for another. Only the status is read; the
body of the answer is never read or stored.
"""

from __future__ import annotations

import asyncio

import httpx

from engram.notifications.destinations import Destination, IPAddress

USER_AGENT = "Engram-Webhooks/1"


class HttpTransport:
    def __init__(self, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_keepalive_connections=0),
        )

    async def post(
        self, destination: Destination, address: IPAddress, headers: dict[str, str], body: bytes
    ) -> int:
        """POST ``body`` to ``destination`` at ``address``; the status answered. Raises
        ``TimeoutError`` past the timeout (the whole attempt, not each phase) and
        ``httpx.HTTPError`` for a connection that fails."""
        url = httpx.URL(
            scheme=destination.scheme,
            host=str(address),
            port=destination.port,
            raw_path=destination.target.encode("ascii", "strict"),
        )
        extensions = {"sni_hostname": destination.host} if destination.scheme == "https" else {}
        request = self._client.build_request(
            "POST",
            url,
            content=body,
            headers={
                **headers,
                "host": destination.host_header,
                "content-type": "application/json",
                "user-agent": USER_AGENT,
            },
            extensions=extensions,
        )
        async with asyncio.timeout(self._timeout_s):
            response = await self._client.send(request, stream=True)
            await response.aclose()
        return response.status_code

    async def close(self) -> None:
        await self._client.aclose()
