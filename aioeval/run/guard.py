"""Fail closed: model output runs only where the host can isolate it.

A run that executes code nobody vetted (``llm-endpoint``, or ``aioeval
score`` of answers produced elsewhere) refuses to start unless the sandbox
has, at the least, a user of its own for candidates (a separate uid, or a
user namespace, so the process limit holds and nothing of the engine's can
be signalled or read), a network namespace, and a memory limit. Replaying a
fixture and running a dataset's own reference answers keep whatever layers
the host gives. ``params.sandbox.isolation: minimal`` is the explicit way to
accept less; the summary records the layers that were in force.
"""

from __future__ import annotations

from aioeval.config import SandboxParams
from aioeval.errors import SandboxError

UNTRUSTED_MODES = ("endpoint", "score")
IDENTITY = ("unprivileged-uid", "user-namespace")


def gaps(layers: list[str], memory_mb: int) -> list[str]:
    """What the sandbox lacks for running model output (empty: enough)."""
    missing = []
    if not set(IDENTITY) & set(layers):
        missing.append("separate uid or user namespace")
    if "network-namespace" not in layers:
        missing.append("network namespace")
    if memory_mb <= 0 and "cgroup-memory" not in layers:
        missing.append("memory limit")
    return missing


def check(mode: str, isolation: str, layers: list[str], memory_mb: int) -> None:
    """Raise SandboxError (one line: what is missing, how to accept it)
    when model output would run with less than `gaps` asks for."""
    if mode not in UNTRUSTED_MODES or isolation == "minimal":
        return
    missing = gaps(layers, memory_mb)
    if missing:
        raise SandboxError(
            f"refusing to run model output: the sandbox here has no {', no '.join(missing)}; "
            "run as root or where user namespaces are allowed, or accept the risk with "
            "--set params.sandbox.isolation=minimal (recorded in summary.json)"
        )


def accepted(mode: str, sandbox: SandboxParams, layers: list[str]) -> str | None:
    """The summary's note when model output ran on ``isolation: minimal``
    with less than `gaps` asks for (None otherwise)."""
    if mode not in UNTRUSTED_MODES or sandbox.isolation != "minimal":
        return None
    missing = gaps(layers, sandbox.memory_mb)
    if not missing:
        return None
    return "isolation: minimal was accepted for model output, which ran with no " + ", no ".join(
        missing
    )
