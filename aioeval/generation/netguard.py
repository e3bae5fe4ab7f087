"""SSRF guard for the endpoint URL.

The engine sends prompts (and an API key) to whatever ``target.endpoint``
names, so a config from an untrusted source must not be able to point it at
a cloud metadata service or another link-local address. Checked before the
first request: the scheme (http/https only), the host name against known
metadata names, and every address the name resolves to, not only the name
(a public-looking name can resolve to 169.254.169.254). Loopback and
private ranges are allowed: a local vLLM/Ollama server is the common case.

`GuardedResolver` applies the same address check to every DNS answer
aiohttp gets during the run, so a name that re-resolves to a forbidden
address later (DNS rebinding) is refused too.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import anyio
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from aioeval.errors import EndpointError

METADATA_HOSTS = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack
        "169.254.170.2",  # AWS ECS task metadata
        "100.100.100.200",  # Alibaba Cloud
        "fd00:ec2::254",  # AWS over IPv6
        "192.0.0.192",  # Oracle Cloud
    )
)
LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))

Resolve = Callable[[str, int], Awaitable[list[str]]]


class UnsafeEndpointError(EndpointError, OSError):
    """Refused by the guard. An OSError too, so aiohttp reports it as a
    connection failure if it surfaces from the resolver mid-run."""


def address_problem(address: str) -> str | None:
    """Why this IP address is refused, or None when it is allowed."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address"
    if any(ip in net for net in LINK_LOCAL):
        return f"{ip} is link-local"
    return None


def host_problem(host: str) -> str | None:
    name = host.rstrip(".").lower()
    if name in METADATA_HOSTS:
        return f"{name} is a cloud metadata host"
    return None


async def system_resolve(host: str, port: int) -> list[str]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


async def check_endpoint(url: str, *, resolve: Resolve = system_resolve) -> None:
    """Raise EndpointError (one line) unless ``url`` is safe to send requests to."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise EndpointError(f"endpoint {url!r}: invalid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise EndpointError(f"endpoint {url!r}: only http and https are allowed")
    host = parts.hostname
    if not host:
        raise EndpointError(f"endpoint {url!r}: no host name")
    if parts.username or parts.password:
        raise EndpointError(
            f"endpoint {url!r}: credentials in the URL are not allowed; use credentials_ref"
        )
    reason = host_problem(host)
    if reason is None:
        try:
            ipaddress.ip_address(host)
            addresses = [host]
        except ValueError:
            try:
                addresses = await resolve(host, port or (443 if parts.scheme == "https" else 80))
            except OSError as exc:
                raise EndpointError(
                    f"endpoint {url!r}: cannot resolve {host}: {exc.strerror or exc}"
                ) from None
        for address in addresses:
            reason = address_problem(address)
            if reason is not None:
                reason = f"{host} resolves to {reason}" if address != host else reason
                break
    if reason is not None:
        raise UnsafeEndpointError(f"endpoint {url!r} refused: {reason}")


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that drops forbidden addresses from every answer."""

    def __init__(self, inner: AbstractResolver | None = None) -> None:
        self._inner = inner or DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        reason = host_problem(host)
        if reason is not None:
            raise UnsafeEndpointError(f"refused: {reason}")
        results = await self._inner.resolve(host, port, family)
        safe = [r for r in results if address_problem(r["host"]) is None]
        if not safe:
            raise UnsafeEndpointError(f"refused: {host} resolves only to forbidden addresses")
        return safe

    async def close(self) -> None:
        await self._inner.close()
