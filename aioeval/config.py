"""Run configuration: the seed's YAML shape, decoded into typed Structs.

Decoding goes through msgspec with unknown fields forbidden, so a typo is an
error naming its path (``$.params.retyr``) instead of a silently ignored key.
``--set dotted.key=value`` edits the raw mapping before decoding, so overrides
are validated exactly like the file. The structs themselves (every field with
its docstring) are in `_config_schema`; this module is their public path, and
reads, overrides and decodes them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import yaml

from . import _config_errors as _errors
from ._config_schema import (
    Base,
    EvalPlusParams,
    ExecutorConfig,
    LiveCodeBenchParams,
    LocalExecutor,
    Params,
    Price,
    RateLimit,
    RayExecutor,
    RetryConfig,
    RunConfig,
    SandboxParams,
    Target,
)
from .errors import ConfigError

__all__ = [
    "SECRET_KEYS",
    "Base",
    "EvalPlusParams",
    "ExecutorConfig",
    "LiveCodeBenchParams",
    "LocalExecutor",
    "Params",
    "Price",
    "RateLimit",
    "RayExecutor",
    "RetryConfig",
    "RunConfig",
    "SandboxParams",
    "Target",
    "build_config",
    "decode_config",
    "load_config",
    "public_config",
]


SECRET_KEYS = frozenset({"target.credentials_ref"})
"""Fields whose values are never repeated in an error message."""


def _shown(assignment: str) -> str:
    """A ``--set`` argument as an error may show it (secret values hidden)."""
    key, sep, _value = assignment.partition("=")
    return f"{key}=<hidden>" if sep and key.strip() in SECRET_KEYS else assignment


def _set_dotted(raw: dict[str, Any], assignment: str) -> None:
    key, sep, value = assignment.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {_shown(assignment)!r}: expected dotted.key=value")
    parts = key.strip().split(".")
    node: dict[str, Any] = raw
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {part} is not a mapping")
        node = child
    try:
        node[parts[-1]] = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(
            f"--set {_shown(assignment)}: cannot parse the value: {problem}"
        ) from None


def load_config(
    path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()
) -> RunConfig:
    """Read YAML (optional), apply ``--set`` overrides, decode strictly."""
    if path is None:
        return build_config({}, "<defaults>", overrides)
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read config: {exc.strerror}") from None
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{source}{where}: invalid YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a mapping with target/params")
    return build_config(raw, source, overrides, text=text)


def build_config(
    base: dict[str, Any],
    source: str,
    overrides: list[str] | tuple[str, ...] = (),
    *,
    text: str | None = None,
) -> RunConfig:
    """``base`` (read from ``source``, whose YAML ``text`` locates lines)
    with ``--set`` overrides applied, decoded strictly. An error names what
    caused it: the ``--set`` flag, or the file, line and field."""
    raw = _applied(base, overrides)
    try:
        return msgspec.convert(raw, RunConfig)
    except msgspec.ValidationError as exc:
        path, message = _errors.parse(exc)
        what = _errors.describe(RunConfig, path, message)
        culprit = _culprit(base, overrides, exc)
        if culprit is not None:
            raise ConfigError(f"--set {_shown(culprit)}: {what}") from None
        line = _errors.yaml_line(text, path) if text is not None else None
        where = f"{source}:{line}" if line is not None else source
        raise ConfigError(f"{where}: {_errors.dotted(path)}: {what}") from None


def _culprit(
    base: dict[str, Any], overrides: list[str] | tuple[str, ...], error: msgspec.ValidationError
) -> str | None:
    """The ``--set`` that caused ``error``, or None when the base did.

    An override that set the failing value (its key is the failing path or
    above it) is the cause. One below the path (a check of a whole section,
    such as ``retry``) is the cause if the error goes away without it. Runs
    only on the error path, so decoding again costs nothing that matters."""
    path = _key_of(_errors.parse(error)[0])
    related = [a for a in overrides if _related(_key(a), path)]
    for assignment in reversed(related):
        key = _key(assignment)
        if path[: len(key)] == key:
            return assignment
        rest = [a for a in overrides if a is not assignment]
        if not _fails_with(_applied(base, rest), error):
            return assignment
    if not related or _fails_with(_applied(base, ()), error):
        return None
    return related[-1]


def _key(assignment: str) -> tuple[str, ...]:
    return tuple(assignment.partition("=")[0].strip().split("."))


def _key_of(path: _errors.Path) -> tuple[str, ...]:
    """The dotted-key part of an error path (up to its first list index)."""
    names: list[str] = []
    for part in path:
        if not isinstance(part, str):
            break
        names.append(part)
    return tuple(names)


def _related(key: tuple[str, ...], path: tuple[str, ...]) -> bool:
    n = min(len(key), len(path))
    return key[:n] == path[:n]


def _applied(base: dict[str, Any], overrides: list[str] | tuple[str, ...]) -> dict[str, Any]:
    raw = copy.deepcopy(base)
    for assignment in overrides:
        _set_dotted(raw, assignment)
    return raw


def _fails_with(raw: dict[str, Any], error: msgspec.ValidationError) -> bool:
    try:
        msgspec.convert(raw, RunConfig)
    except msgspec.ValidationError as exc:
        return str(exc) == str(error)
    return False


def decode_config(raw: dict[str, Any], source: str = "<config>") -> RunConfig:
    return build_config(raw, source)


def public_config(cfg: RunConfig) -> dict[str, Any]:
    """The config as recorded in outputs (it never holds the key itself)."""
    return msgspec.to_builtins(cfg)  # type: ignore[no-any-return]
