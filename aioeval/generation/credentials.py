"""API keys from ``target.credentials_ref``.

Only ``env:NAME`` is supported: the config names where the key lives, never
the key itself, so run.json (which records the config) cannot leak it. The
resolved key is wrapped in `ApiKey`, whose repr and str are masked, and is
only ever put into the Authorization header. Sandboxed candidates cannot see
it: their template processes get an allowlisted environment, never the
engine's.
"""

from __future__ import annotations

import os
import re

from aioeval.errors import ConfigError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ApiKey:
    """A secret string that does not print itself."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "ApiKey(***)"

    __str__ = __repr__


def resolve_credentials(
    ref: str | None, environ: dict[str, str] | os._Environ[str] | None = None
) -> ApiKey | None:
    """The key ``ref`` points at, or None when no credentials are configured."""
    if ref is None:
        return None
    env = os.environ if environ is None else environ
    scheme, sep, name = ref.partition(":")
    if not sep or scheme != "env":
        raise ConfigError(
            f"target.credentials_ref {ref!r}: unsupported; use env:NAME (an environment variable)"
        )
    if not _NAME.fullmatch(name):
        raise ConfigError(f"target.credentials_ref {ref!r}: {name!r} is not a variable name")
    value = env.get(name)
    if not value:
        raise ConfigError(
            f"target.credentials_ref {ref!r}: environment variable {name} is not set or empty"
        )
    if any(c in value for c in "\r\n"):
        raise ConfigError(f"target.credentials_ref {ref!r}: the key contains a line break")
    return ApiKey(value.strip())
