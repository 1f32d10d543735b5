"""Where notifications may go: the rules applied to a URL and the addresses it resolves to."""

from __future__ import annotations

import ipaddress

import pytest

from engram.infra.settings import WebhooksSettings
from engram.notifications.destinations import DestinationPolicy, parse_destination
from engram.notifications.errors import DestinationRefused

STRICT = DestinationPolicy(WebhooksSettings())
PRIVATE_OK = DestinationPolicy(WebhooksSettings(allow_private=True))


def _check(policy: DestinationPolicy, url: str, *addresses: str) -> None:
    destination = parse_destination(url)
    literal = [] if destination.literal is None else [destination.literal]
    policy.check(destination, [ipaddress.ip_address(a) for a in addresses] or literal)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://10.0.0.1/", "10.0.0.1 is a private address"),
        ("http://169.254.169.254/", "169.254.169.254 is a link-local address"),
        ("https://127.0.0.1:8443/hook", "127.0.0.1 is a loopback address"),
        ("https://[::1]/hook", "::1 is a loopback address"),
        ("https://[::ffff:10.1.2.3]/", "is a private address"),
        ("https://0.0.0.0/", "the unspecified address"),
        ("https://100.64.0.1/", "not a public address"),
        ("https://[fe80::1]/", "link-local"),
    ],
)
def test_an_address_that_is_not_public_is_refused_saying_why(url: str, said: str) -> None:
    with pytest.raises(DestinationRefused, match="ENGRAM_WEBHOOKS_ALLOWLIST") as refused:
        _check(STRICT, url)
    assert said in str(refused.value)


def test_a_name_that_resolves_to_a_private_address_is_refused_naming_both() -> None:
    with pytest.raises(DestinationRefused, match=r"hooks\.example\.com \(which resolves to 10"):
        _check(STRICT, "https://hooks.example.com/x", "93.184.216.34", "10.0.0.7")


def test_https_to_a_public_address_is_allowed_and_plain_http_is_not() -> None:
    _check(STRICT, "https://hooks.example.com/x?a=1", "93.184.216.34")
    with pytest.raises(DestinationRefused, match="over https"):
        _check(STRICT, "http://hooks.example.com/x", "93.184.216.34")


def test_allow_private_opens_loopback_and_private_with_http_but_never_link_local() -> None:
    _check(PRIVATE_OK, "http://127.0.0.1:8089/hook")
    _check(PRIVATE_OK, "http://10.0.0.1/")
    with pytest.raises(DestinationRefused, match="link-local") as refused:
        _check(PRIVATE_OK, "http://169.254.169.254/latest/meta-data/")
    assert "ALLOW_PRIVATE" not in str(refused.value)  # only the allow-list opens it
    with pytest.raises(DestinationRefused, match="over https"):
        _check(PRIVATE_OK, "http://hooks.example.com/", "93.184.216.34")


def test_an_allow_listed_origin_is_exempt_from_the_address_and_scheme_rules() -> None:
    policy = DestinationPolicy(WebhooksSettings(allowlist=["http://169.254.169.254"]))
    _check(policy, "http://169.254.169.254/hook")
    with pytest.raises(DestinationRefused):  # the origin includes the port
        _check(policy, "http://169.254.169.254:8080/hook")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("https://user:secret@hooks.example.com/", "carries credentials"),
        ("ftp://hooks.example.com/", "https://"),
        ("https:///path", "names no host"),
        ("https://hooks.example.com/#frag", "no #fragment"),
        ("https://hooks.example.com/ä", "ASCII"),
        ("https://hooks.example.com:99999/", "not a URL"),
    ],
)
def test_a_malformed_url_is_refused_saying_what_is_wrong(url: str, said: str) -> None:
    with pytest.raises(DestinationRefused, match=said) as refused:
        parse_destination(url)
    assert "secret" not in str(refused.value).replace("a secret in the URL", "")


def test_the_request_keeps_the_name_for_host_and_the_path_and_query() -> None:
    destination = parse_destination("https://Hooks.Example.com:8443/in/box?x=1")
    assert destination.host == "hooks.example.com"
    assert destination.host_header == "hooks.example.com:8443"
    assert destination.target == "/in/box?x=1"
    assert destination.origin == "https://hooks.example.com:8443"
    assert parse_destination("https://[::1]/").host_header == "[::1]"


EMBEDDING = [
    ("::127.0.0.1", "127.0.0.1, which is a loopback address"),  # IPv4-compatible
    ("::ffff:127.0.0.1", "127.0.0.1, which is a loopback address"),  # mapped
    ("::ffff:0:7f00:1", "127.0.0.1, which is a loopback address"),  # SIIT
    ("64:ff9b::7f00:1", "127.0.0.1, which is a loopback address"),  # NAT64
    ("64:ff9b::a9fe:a9fe", "169.254.169.254, which is a link-local address"),
    ("2002:7f00:1::", "127.0.0.1, which is a loopback address"),  # 6to4
    ("2002:a00:1::1", "10.0.0.1, which is a private address"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1, which is a loopback address"),  # Teredo
    ("64:ff9b:1::a00:1", "a local-use NAT64 address"),
]


@pytest.mark.parametrize(("address", "said"), EMBEDDING)
def test_an_ipv6_address_is_judged_by_the_ipv4_address_it_carries(address: str, said: str) -> None:
    with pytest.raises(DestinationRefused) as refused:
        _check(STRICT, f"https://[{address}]/hook")
    assert said in str(refused.value)
    # The same address as a DNS answer for a name.
    with pytest.raises(
        DestinationRefused, match=r"hooks\.example\.com \(which resolves to"
    ) as named:
        _check(STRICT, "https://hooks.example.com/", "93.184.216.34", address)
    assert said in str(named.value)


def test_an_ipv6_form_of_a_public_ipv4_address_is_public() -> None:
    for address in ("64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"):
        _check(STRICT, f"https://[{address}]/hook")


def test_allow_private_opens_an_ipv6_form_of_loopback_but_never_of_link_local() -> None:
    _check(PRIVATE_OK, "http://[64:ff9b::7f00:1]:8089/hook")
    with pytest.raises(DestinationRefused, match=r"169\.254\.169\.254, which is a link-local"):
        _check(PRIVATE_OK, "http://[2002:a9fe:a9fe::]/")
