"""Where notifications may go: the URL an endpoint registers and the addresses its host resolves
to, checked at registration and again before every attempt.

The rules (docs/notifications.md, "Destinations"):

- the URL is absolute, ``https`` (or ``http``), with a host, and carries no credentials and no
  fragment;
- every address the host resolves to is public (``ipaddress``' ``is_global``): a private,
  loopback, link-local (cloud metadata lives at 169.254.169.254), shared, reserved or multicast
  address is refused, so an endpoint cannot be aimed at the network Engram runs in;
- an IPv6 address that carries an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible
  ``::a.b.c.d``, SIIT ``::ffff:0:a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``, Teredo
  ``2001::/32``) is judged by the IPv4 address it carries, which is where it leads: Python's
  ``is_global`` calls ``[::127.0.0.1]``, ``[64:ff9b::7f00:1]`` and ``[2002:7f00:1::]`` public. A
  local-use NAT64 prefix (``64:ff9b:1::/48``) is refused outright (its translator is local);
- the scheme is ``https``, so the payload and its signature are not readable on the way.

An origin in ``ENGRAM_WEBHOOKS_ALLOWLIST`` is exempt from the last two; with
``ENGRAM_WEBHOOKS_ALLOW_PRIVATE=true`` private and loopback addresses (never link-local ones) are
allowed, and plain ``http`` to them, for a receiver on the same machine or network.

The sender connects to an address checked here, never to the name again
(:mod:`engram.notifications.transport`), so a name that resolves to a public address when checked
and to a private one a moment later (DNS rebinding) cannot reach the private one.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from engram.infra.settings import WebhooksSettings
from engram.notifications.errors import DestinationRefused, DestinationUnresolved

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_DEFAULT_PORTS = {"https": 443, "http": 80}
RESOLVE_TIMEOUT_S = 5.0
"""The longest a name may take to resolve (at registration, and within an attempt's time)."""
_ONLY_BY_ORIGIN = (
    "Engram sends only to public addresses unless the origin is in ENGRAM_WEBHOOKS_ALLOWLIST"
)
_HOW_TO_ALLOW = (
    "Engram sends only to public addresses unless the origin is in ENGRAM_WEBHOOKS_ALLOWLIST "
    "(or, for private and loopback addresses, ENGRAM_WEBHOOKS_ALLOW_PRIVATE=true)"
)


@dataclass(frozen=True)
class Destination:
    """A parsed endpoint URL: what to connect to and what to ask for."""

    url: str
    scheme: str
    host: str
    port: int
    target: str
    """The path and query, as sent in the request line."""

    @property
    def origin(self) -> str:
        return origin_of(self.scheme, self.host, self.port)

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def literal(self) -> IPAddress | None:
        """The host when it is an address rather than a name."""
        try:
            return ipaddress.ip_address(self.host)
        except ValueError:
            return None


def origin_of(scheme: str, host: str, port: int) -> str:
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


def parse_destination(url: str) -> Destination:
    """``url`` parsed, or :class:`DestinationRefused` naming what is wrong with it."""
    text = url.strip()
    if not text.isascii() or any(c.isspace() or ord(c) < 0x20 for c in text):
        raise DestinationRefused(
            f"refused {text[:200]!r}: a webhook URL is ASCII without spaces (percent-encode the "
            "path, write the host in its xn-- form)"
        )
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:
        raise DestinationRefused(f"refused {text[:200]!r}: not a URL ({error})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise DestinationRefused(f"refused {text[:200]!r}: a webhook URL is https:// (or http://)")
    if not parts.hostname:
        raise DestinationRefused(f"refused {text[:200]!r}: the URL names no host")
    if parts.username is not None or parts.password is not None:
        raise DestinationRefused(
            "refused the URL: it carries credentials (user:password@); deliveries are "
            "authenticated by their signature, and a secret in the URL would be shown wherever "
            "the endpoint is listed"
        )
    if parts.fragment:
        raise DestinationRefused(f"refused {text[:200]!r}: a webhook URL has no #fragment")
    return Destination(
        url=text,
        scheme=scheme,
        host=parts.hostname.lower().rstrip("."),
        port=port or _DEFAULT_PORTS[scheme],
        target=_target(parts),
    )


def _target(parts: SplitResult) -> str:
    path = parts.path or "/"
    return f"{path}?{parts.query}" if parts.query else path


_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_TEREDO = ipaddress.IPv6Network("2001::/32")


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 ``address`` carries, where a packet to it ends up: mapped,
    compatible (but not ``::`` and ``::1``), SIIT, NAT64, 6to4, or a Teredo client's; None
    for an IPv4 address or an IPv6 address that carries none."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        return low
    if address in _IPV4_TRANSLATED or address in _NAT64:
        return low
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _TEREDO and address.teredo is not None:
        return address.teredo[1]
    return None


def _why_not_public(address: IPAddress) -> str | None:
    """Why ``address`` is not a public one, in words; None when it is."""
    embedded = embedded_ipv4(address)
    if embedded is not None:
        why = _why_not_public(embedded)
        return None if why is None else f"an IPv6 form of {embedded}, which is {why}"
    if address in _NAT64_LOCAL:
        return "a local-use NAT64 address (its translator is on the local network)"
    if address.is_link_local:
        return "a link-local address (cloud metadata services answer there)"
    if address.is_loopback:
        return "a loopback address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "not a public address (shared, reserved or documentation range)"
    return None


def _private_allowed(address: IPAddress) -> bool:
    """What ``allow_private`` opens: private and loopback addresses, never link-local ones."""
    embedded = embedded_ipv4(address)
    if embedded is not None:
        return _private_allowed(embedded)
    if address.is_link_local or address.is_multicast or address.is_unspecified:
        return False
    return address.is_loopback or address.is_private


class DestinationPolicy:
    """The settings' rules, applied to a destination and the addresses it resolves to."""

    def __init__(self, settings: WebhooksSettings) -> None:
        self._allowed = frozenset(_allowed_origins(settings.allowlist))
        self._allow_private = settings.allow_private

    def allow_listed(self, destination: Destination) -> bool:
        return destination.origin in self._allowed

    def check(self, destination: Destination, addresses: Sequence[IPAddress]) -> None:
        """Refuse ``destination`` unless every one of ``addresses`` (what its host resolves
        to) may be sent to, and its scheme with them."""
        if not addresses:
            raise DestinationRefused(
                f"refused {destination.url}: {destination.host} resolves to no address"
            )
        if self.allow_listed(destination):
            return
        for address in addresses:
            why = _why_not_public(address)
            if why is not None and not (self._allow_private and _private_allowed(address)):
                shown = (
                    destination.host
                    if address == destination.literal
                    else (f"{destination.host} (which resolves to {address})")
                )
                raise DestinationRefused(
                    f"refused {destination.url}: {shown} is {why}. "
                    + (_HOW_TO_ALLOW if _private_allowed(address) else _ONLY_BY_ORIGIN)
                )
        every_private = all(_why_not_public(a) is not None for a in addresses)
        if destination.scheme != "https" and not (self._allow_private and every_private):
            raise DestinationRefused(
                f"refused {destination.url}: webhooks are sent over https; plain http only to an "
                "origin in ENGRAM_WEBHOOKS_ALLOWLIST"
            )


def _allowed_origins(entries: Iterable[str]) -> Iterable[str]:
    for entry in entries:
        parsed = parse_destination(entry)
        yield parsed.origin


async def resolve(destination: Destination) -> list[IPAddress]:
    """The addresses ``destination``'s host resolves to now (the host itself when it is one),
    in the resolver's order, each once."""
    if destination.literal is not None:
        return [destination.literal]
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(RESOLVE_TIMEOUT_S):
            found = await loop.getaddrinfo(
                destination.host, destination.port, type=socket.SOCK_STREAM
            )
    except TimeoutError:
        raise DestinationUnresolved(
            f"refused {destination.url}: {destination.host} did not resolve within "
            f"{RESOLVE_TIMEOUT_S:g} s"
        ) from None
    except (socket.gaierror, UnicodeError) as error:
        raise DestinationUnresolved(
            f"refused {destination.url}: {destination.host} does not resolve ({error})"
        ) from None
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


async def checked_addresses(policy: DestinationPolicy, destination: Destination) -> list[IPAddress]:
    """Resolve ``destination`` and apply ``policy``: the addresses it may be sent to."""
    addresses = await resolve(destination)
    policy.check(destination, addresses)
    return addresses
