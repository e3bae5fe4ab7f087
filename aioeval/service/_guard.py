"""Who may call ``aioeval serve``, decided from the headers alone, before
any body is read.

- ``Host`` (DNS rebinding: a web page whose name resolves to 127.0.0.1 keeps
  its own name in ``Host``): an IP literal, ``localhost`` or a name under
  ``.localhost`` (browsers resolve those to loopback themselves), or a name
  the operator allowed. A missing ``Host`` (no browser omits it) is fine.
- ``Origin`` (a web page posting across sites): absent, or the server's own
  origin (``http://`` or ``https://`` plus the request's ``Host``). A
  browser's foreign or ``null`` Origin is refused.
- The bearer token, compared in constant time (digests of both sides, so
  neither length nor content leaks); any malformed header is a 401.
- ``POST`` bodies must say ``Content-Type: application/json``: a web page
  can post ``text/plain`` across sites without asking, never JSON.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable

from multidict import CIMultiDictProxy

OPEN_PATHS = frozenset({"/healthz"})
"""Paths answered without the token (a load balancer's probe)."""


class Guard:
    """``guard.refusal(method, path, headers)``: ``(status, reason)`` for a
    request that must be refused, else None."""

    def __init__(self, token: str | None, allow_hosts: Iterable[str] = ()) -> None:
        self._token = None if token is None else _digest(f"Bearer {token}".encode())
        self._hosts = frozenset(_name(h) for h in allow_hosts)

    def refusal(
        self, method: str, path: str, headers: CIMultiDictProxy[str]
    ) -> tuple[int, str] | None:
        host = headers.get("Host")
        if host is not None and not self._host_ok(host):
            return 403, f"Host {host[:100]!r} is not this server (allow a name with --allow-host)"
        origin = headers.get("Origin")
        if origin is not None and not _same_origin(origin, host):
            return 403, f"cross-origin request refused (Origin {origin[:100]!r})"
        if self._token is not None and path not in OPEN_PATHS:
            given = headers.get("Authorization", "").encode("utf-8", "surrogatepass")
            if not hmac.compare_digest(_digest(given), self._token):
                return 401, "missing or wrong bearer token"
        if method == "POST":
            kind = headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                return 415, "the body must be JSON, sent as Content-Type: application/json"
        return None

    def _host_ok(self, host: str) -> bool:
        name = _name(_strip_port(host))
        return _local(name) or name in self._hosts


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _strip_port(host: str) -> str:
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    name, sep, port = host.rpartition(":")
    return name if sep and port.isdigit() else host


def _name(host: str) -> str:
    return host.strip().rstrip(".").lower()


def _local(name: str) -> bool:
    """An IP literal (no name to rebind) or a loopback name."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _same_origin(origin: str, host: str | None) -> bool:
    if host is None:
        return False
    scheme, sep, rest = origin.strip().partition("://")
    return bool(sep) and scheme.lower() in ("http", "https") and rest.lower() == host.lower()
