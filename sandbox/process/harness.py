"""What runs inside the forked child: isolate, execute, report.

The child is forked from a template that has already imported this module
and the common standard library, so starting a candidate costs a fork, not an
interpreter start. Everything here runs after the fork and before or around
the candidate's code; it must not return to the template's loop (it always
ends in ``os._exit``).

Per task (see `protocol`):

- ``Program``: run it; a pass is a message on a private pipe that starts
  with the template's secret, written only after the program returned.
  Printed text goes to a capped memfd and can never be a pass; a candidate
  that digs the secret out of its own interpreter can forge one, which is why
  this model is only the official-compatibility mode.
- ``Call``: run trusted code and return one call's value as plain data.
- ``Serve``: run the candidate's program, then answer the verifier's
  requests on the job's channel until it hangs up (see `serve`). Nothing
  this child sends can be a pass by itself: the verifier runs the test, the
  template reports how the child ended, and the engine combines the two.
"""

from __future__ import annotations

import math
import os
import resource
import struct
from collections.abc import Callable, Mapping

from .. import protocol
from ..values import plain
from . import serve

PASSED = b"P"
FAILED = b"F"
ERROR = b"E"
SETUP = b"S"
"""The child's isolation could not be set up: the engine's fault, never the answer's."""
READY = b"R"
"""The child's isolation is in place and the task's code runs next: a
setup failure reported after this mark is the candidate's own writing."""
VALUE = b"V"
LEN = struct.Struct("<I")

# Bound before any candidate code runs, so rebinding builtins or os
# functions from the candidate's program does not change this harness.
_write = os.write
_read = os.read
_exit = os._exit
_BaseException = BaseException
_Exception = Exception
_type = type
_str = str
_exec = exec
_eval = eval
_compile = compile
_len = len


def _reason(exc: BaseException) -> str:
    """A short, safe description of an exception raised by candidate code."""
    try:
        text = f"{_type(exc).__name__}: {_str(exc)}"
    except BaseException:
        try:
            text = _type(exc).__name__
        except BaseException:
            text = "exception"
    return text[:500]


def _send(fd: int, token: bytes, kind: bytes, payload: bytes) -> None:
    _write_all(fd, token + kind + LEN.pack(len(payload)) + payload)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = _write(fd, view)
        view = view[n:]


def apply_limits(
    *,
    cpu_s: float,
    memory_mb: int,
    fsize_mb: int,
    nofile: int,
    nproc: int | None,
    cpu_hard_s: float | None = None,
) -> None:
    """Set the per-process rlimits. RLIMIT_CPU is whole seconds: the soft
    limit sends SIGXCPU, the hard one (a second later, or ``cpu_hard_s``:
    a served child's ceiling, see `protocol.served`) SIGKILL."""
    cpu = max(1, math.ceil(cpu_s))
    hard = cpu + 1 if cpu_hard_s is None else max(cpu + 1, math.ceil(cpu_hard_s))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
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
    task: object,
    token: bytes,
    result_fd: int,
    out_fd: int,
    workdir: str,
    env: Mapping[str, str] | None,
    limits: Mapping[str, float | int | None],
    channel_fd: int | None = None,
    confine: Callable[[], None] | None = None,
) -> None:
    """Isolate this freshly forked process, run the task, report, exit.

    ``confine`` applies the per-child half of the template's isolation layers
    (uid drop, Landlock; see ``layers``); it runs after the child has its
    own session, stdio and working directory and before any fd is closed, so
    it can still use descriptors the template prepared.
    """
    try:
        isolate(result_fd, out_fd, workdir, env, limits, channel_fd, confine)
    except BaseException as exc:
        _send(result_fd, token, SETUP, f"sandbox setup failed: {_reason(exc)}".encode())
        _exit(71)
    if isinstance(task, protocol.Serve):
        assert channel_fd is not None
        os.close(result_fd)  # nothing on that pipe counts for a served job
        serve.run(task.program, channel_fd)
    _send(result_fd, token, READY, b"")
    if isinstance(task, protocol.Call):
        _call(task, token, result_fd)
    else:
        assert isinstance(task, protocol.Program)
        _program(task.program, token, result_fd)


def isolate(
    result_fd: int,
    out_fd: int,
    workdir: str,
    env: Mapping[str, str] | None,
    limits: Mapping[str, float | int | None],
    channel_fd: int | None,
    confine: Callable[[], None] | None,
) -> None:
    """Make this freshly forked child a sandboxed process: its own session,
    stdin from /dev/null and stdout and stderr to `out_fd`, `workdir` as its
    directory, the layers' per-child half (`confine`), only the report pipe
    and the channel open, and the rlimits. Used for a candidate's child and
    for a verifier's check alike."""
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
    keep = sorted(fd for fd in (result_fd, channel_fd) if fd is not None)
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    if env is not None:
        # The template normally installs the candidates' environment in
        # itself once (HOME/TMPDIR included), which saves rebuilding
        # os.environ in every child.
        os.environ.clear()
        os.environ.update(env)
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
    # The random module starts from the template's seeded state (restored
    # after the fork), so every candidate gets the same verdict on every
    # run (the verifier resets the tests' state the same way).
    apply_limits(
        cpu_s=float(limits["cpu_s"] or 1),
        memory_mb=int(limits["memory_mb"] or 0),
        fsize_mb=int(limits["fsize_mb"] or 1),
        nofile=int(limits["nofile"] or 64),
        nproc=None if limits.get("nproc") is None else int(limits["nproc"] or 0),
        cpu_hard_s=None if limits.get("cpu_hard_s") is None else float(limits["cpu_hard_s"] or 0),
    )


def _program(program: str, token: bytes, result_fd: int) -> None:
    try:
        code = _compile(program, "<candidate>", "exec")
    except BaseException as exc:
        _send(result_fd, token, ERROR, _reason(exc).encode("utf-8", "replace"))
        _exit(0)
    # Globals start empty, exactly as the official harnesses exec programs.
    scope: dict[str, object] = {}
    try:
        _exec(code, scope)
    except _BaseException as exc:
        serve.flush()
        _send(result_fd, token, FAILED, _reason(exc).encode("utf-8", "replace"))
        _exit(0)
    serve.flush()
    _send(result_fd, token, PASSED, b"")
    _exit(0)


def _call(task: protocol.Call, token: bytes, result_fd: int) -> None:
    """Trusted code only: the problem's own program, called with data."""
    scope: dict[str, object] = {}
    try:
        _exec(_compile(task.program, "<problem>", "exec"), scope)
        fn = scope[task.entry]
        if task.args_source is not None:
            scope["__aioeval_fn__"] = fn
            value = _eval(f"__aioeval_fn__({task.args_source})", scope)
        else:
            args, kwargs = plain.loads(task.args)
            value = fn(*args, **kwargs)  # type: ignore[operator]
        payload = plain.dumps(value)
    except _BaseException as exc:
        serve.flush()
        _send(result_fd, token, FAILED, _reason(exc).encode("utf-8", "replace"))
        _exit(0)
    serve.flush()
    _send(result_fd, token, VALUE, payload)
    _exit(0)


def parse_report(data: memoryview, token: bytes) -> tuple[bytes, memoryview] | None:
    """Return (kind, payload) of the first well-formed, authentic message
    after the `READY` mark (or the harness's `SETUP` failure in its place);
    the payload is a view into ``data`` (no copy of the child's text). A
    program that digs the token out of its own memory can write any report
    (official scoring says so), but not a setup failure, which would be
    the engine's fault (an ``infra_error``, not counted in n): one after the
    mark is no report at all."""
    found = _message(data, token)
    if found is None or found[0] != READY:
        return found
    found = _message(data[len(token) + 1 + LEN.size + len(found[1]) :], token)
    return None if found is not None and found[0] == SETUP else found


def _message(data: memoryview, token: bytes) -> tuple[bytes, memoryview] | None:
    head = len(token) + 1 + LEN.size
    if len(data) < head or data[: len(token)] != token:
        return None
    kind = bytes(data[len(token) : len(token) + 1])
    (size,) = LEN.unpack_from(data, len(token) + 1)
    if len(data) < head + size:
        return None
    return kind, data[head : head + size]
