"""The address of the client behind a request: what every limit and log keys by.

`REMOTE_ADDR` is the connection's peer. Behind the documented nginx on the
same host that is 127.0.0.1 for everyone, so a limit per address would be one
limit for the whole world. When the peer is one of `TRUSTED_PROXIES`, the
client is read from `X-Forwarded-For`: each proxy appends the address it was
reached from, so walking the list from the right past the trusted proxies,
the first address that is not one is the client. Whatever the client wrote
in the header itself lies to the left of it and is never read. A peer that is
not a trusted proxy is the client, whatever its headers say.

`ClientAddressMiddleware` works it out once per request and keeps it in the
WSGI environ under `ENVIRON_KEY`, where gunicorn's access log reads it
(`manage.py serve`). docs/security.md, "Client addresses".
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

ENVIRON_KEY = "seed.client_address"
# Hops read from the right of X-Forwarded-For: more trusted proxies than this in a
# row is no deployment; the header's length is bounded by gunicorn (8 KiB a field).
MAX_HOPS = 16

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_address(text: str) -> Address | None:
    """An address as a proxy may write it (`203.0.113.9`, `2001:db8::1`, with a port
    as `203.0.113.9:443` or `[2001:db8::1]:443`); an IPv4 address mapped into IPv6
    is the IPv4 address. None when it is none of these."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def address_in(address: str | Address | None, networks: Iterable[str]) -> bool:
    """Whether `address` is one of `networks` (addresses or networks, e.g. 10.0.0.0/8)."""
    found = parse_address(address) if isinstance(address, str) else address
    return found is not None and any(found in net for net in _networks(tuple(networks)))


def forwarded_client(peer: str, forwarded_for: str, trusted: Iterable[str]) -> str:
    """The client's address, from the connection's `peer` and the X-Forwarded-For
    header, trusting only proxies in `trusted` to have written the header."""
    trusted = tuple(trusted)
    client = parse_address(peer)
    if client is None:
        return peer  # not an IP peer (a unix socket): nothing to judge it by
    hops = forwarded_for.rsplit(",", MAX_HOPS)[::-1][:MAX_HOPS] if forwarded_for else []
    for hop in hops:
        if not address_in(client, trusted):
            break
        reported = parse_address(hop)
        if reported is None:
            break  # a trusted proxy wrote something that is no address: keep the proxy
        client = reported
    return str(client)


def resolve_client_address(environ: dict[str, Any]) -> str:
    return forwarded_client(
        environ.get("REMOTE_ADDR", ""),
        environ.get("HTTP_X_FORWARDED_FOR", ""),
        settings.TRUSTED_PROXIES,
    )


def client_address(request: HttpRequest) -> str:
    """The client's address (module docstring), worked out once per request."""
    address = request.META.get(ENVIRON_KEY)
    if address is None:
        address = request.META[ENVIRON_KEY] = resolve_client_address(request.META)
    return str(address)


class ClientAddressMiddleware:
    """Puts the client's address in the environ before anything reads it (the
    access log reads it there after the response)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        client_address(request)
        return self.get_response(request)
