"""Wire protocol between the engine and a sandbox template process.

Frames are a 4-byte little-endian length followed by a msgpack body. The
engine sends one `Hello` when a template starts, then `Job` frames; the
template answers each job with exactly one `Outcome`, in order. Both sides
import this module (the template loads it from its own directory, because it
runs under ``python -I -S`` and must never import the engine).

The candidate's child process never talks this protocol: it writes to a
private per-job pipe that only the template reads, and every message it sends
starts with a per-template secret the child cannot learn from outside its own
interpreter.
"""

from __future__ import annotations

import struct

import msgspec

HEADER = struct.Struct("<I")
MAX_FRAME = 64 * 1024 * 1024


class Limits(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """Resource limits applied to every candidate child.

    cpu_s is the CPU-time budget (the verdict-defining timeout); wall_s is a
    backstop for candidates that sleep or block, chosen large enough that a
    loaded machine does not trip it for a candidate within its CPU budget.
    """

    cpu_s: float = 3.0
    wall_s: float = 10.0
    memory_mb: int = 2048
    fsize_mb: int = 64
    nofile: int = 256
    nproc: int = 512
    output_tail: int = 2048
    disk_mb: int = 256
    """Total size of the files a candidate may write (its private tmpfs)."""


class Hello(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """First frame to a template: limits plus the environment for children."""

    limits: Limits
    env: dict[str, str]
    work_root: str
    layers: list[str] = []
    isolation: str = "best"
    """strict, best or minimal: which isolation layers the template sets up."""


class Ready(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """The template's answer to Hello: its pid and the layers it enabled."""

    pid: int
    layers: list[str]
    warnings: list[str]
    missing: list[str] = []
    """Layers the mode asked for that this machine cannot provide."""
    cgroups: list[str] = []
    """cgroup directories the template created (the engine removes leftovers)."""


class Job(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One candidate program to run in a fresh child.

    With ``value_expr`` set, the child evaluates it after the program and
    returns the value encoded as plain builtin data (see ``plain``) instead of
    a pass signal; the engine then judges the value itself.
    """

    id: int
    program: str
    value_expr: str | None = None


class Outcome(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """What happened to one job.

    status: passed, failed, timeout or error. ``value`` holds the encoded value
    for value jobs that completed. Times are the child's, measured by the
    template (wall from fork to reap; CPU user+system of the child and the
    descendants it reaped).
    """

    id: int
    status: str
    reason: str = ""
    value: bytes | None = None
    wall_ms: float = 0.0
    cpu_ms: float = 0.0
    output_tail: str = ""


_encoder = msgspec.msgpack.Encoder()


def encode_frame(msg: Hello | Job | Outcome | Ready) -> bytes:
    body = _encoder.encode(msg)
    return HEADER.pack(len(body)) + body


def encode_frames(msgs: list[Job]) -> bytes:
    return b"".join(encode_frame(m) for m in msgs)
