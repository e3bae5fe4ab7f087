"""What runs inside the forked child: isolate, execute, report.

The child is forked from a template that has already imported this module
and the common standard library, so starting a candidate costs a fork, not an
interpreter start. Everything here runs after the fork and before or around
the candidate's code; it must not return to the template's loop (it always
ends in ``os._exit``).

The report channel is a pipe only the template reads. A message starts with
the template's secret plus the job id, so text the candidate prints (it goes
to a capped memfd, not to this pipe) can never be a pass. A pass is written
only after the program, and with it the problem's check, returned.
"""

from __future__ import annotations

import math
import os
import resource
import struct
import sys
from collections.abc import Callable, Mapping

try:
    from . import plain
except ImportError:  # loaded as a top-level module inside the template
    import plain  # type: ignore[no-redef,import-not-found]

PASSED = b"P"
FAILED = b"F"
ERROR = b"E"
VALUE = b"V"
LEN = struct.Struct("<I")

_write = os.write
_exit = os._exit
_BaseException = BaseException
_type = type
_str = str


def _reason(exc: BaseException) -> str:
    """A short, safe description of an exception raised by candidate code."""
    try:
        text = f"{_type(exc).__name__}: {_str(exc)}"
    except BaseException:
        text = _type(exc).__name__
    return text[:500]


def _send(fd: int, token: bytes, kind: bytes, payload: bytes) -> None:
    data = token + kind + LEN.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        n = _write(fd, view)
        view = view[n:]


def apply_limits(
    *, cpu_s: float, memory_mb: int, fsize_mb: int, nofile: int, nproc: int | None
) -> None:
    """Set the per-process rlimits. RLIMIT_CPU is whole seconds: the soft
    limit sends SIGXCPU, the hard one a second later SIGKILL."""
    cpu = max(1, math.ceil(cpu_s))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if memory_mb > 0:
        mem = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    fsize = fsize_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if nproc is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def child_main(
    *,
    program: str,
    value_expr: str | None,
    token: bytes,
    result_fd: int,
    out_fd: int,
    workdir: str,
    env: Mapping[str, str] | None,
    limits: Mapping[str, float | int | None],
    pre_exec: list[object] | None = None,
    confine: Callable[[], None] | None = None,
) -> None:
    """Isolate this freshly forked process, run the program, report, exit.

    ``confine`` applies the per-child half of the template's isolation layers
    (uid drop, Landlock; see ``layers``); it runs after the child has its
    own session, stdio and working directory and before any fd is closed, so
    it can still use descriptors the template prepared.
    """
    try:
        os.setsid()
        # Signal dispositions are inherited from the template, which leaves
        # Python's defaults alone, so nothing needs resetting here.
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.chdir(workdir)
        if confine is not None:
            confine()
        keep = result_fd
        os.closerange(3, keep)
        os.closerange(keep + 1, 65536)
        for hook in pre_exec or ():
            hook()  # type: ignore[operator]
        if env is not None:
            # The template normally installs the candidates' environment in
            # itself once (HOME/TMPDIR included), which saves rebuilding
            # os.environ in every child.
            os.environ.clear()
            os.environ.update(env)
            os.environ["HOME"] = workdir
            os.environ["TMPDIR"] = workdir
        # The random module is not reseeded: like the official harnesses'
        # forked checks, every candidate starts from the same state, so a
        # candidate that uses random gets the same verdict every run.
        apply_limits(
            cpu_s=float(limits["cpu_s"] or 1),
            memory_mb=int(limits["memory_mb"] or 0),
            fsize_mb=int(limits["fsize_mb"] or 1),
            nofile=int(limits["nofile"] or 64),
            nproc=None if limits.get("nproc") is None else int(limits["nproc"] or 0),
        )
    except BaseException as exc:
        _send(result_fd, token, ERROR, f"sandbox setup failed: {_reason(exc)}".encode())
        _exit(71)

    try:
        code = compile(program, "<candidate>", "exec")
    except BaseException as exc:
        _send(result_fd, token, ERROR, _reason(exc).encode("utf-8", "replace"))
        _exit(0)

    # Globals start empty, exactly as the official harnesses exec programs.
    scope: dict[str, object] = {}
    try:
        exec(code, scope)
        payload = b""
        kind = PASSED
        if value_expr is not None:
            kind = VALUE
            payload = plain.dumps(eval(value_expr, scope))
    except _BaseException as exc:
        _flush()
        _send(result_fd, token, FAILED, _reason(exc).encode("utf-8", "replace"))
        _exit(0)
    _flush()
    _send(result_fd, token, kind, payload)
    _exit(0)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def parse_report(data: bytes, token: bytes) -> tuple[bytes, bytes] | None:
    """Return (kind, payload) of the first well-formed, authentic message."""
    head = len(token) + 1 + LEN.size
    if len(data) < head or data[: len(token)] != token:
        return None
    kind = data[len(token) : len(token) + 1]
    (size,) = LEN.unpack_from(data, len(token) + 1)
    if len(data) < head + size:
        return None
    return kind, bytes(data[head : head + size])
