"""A caller's problem parsed in a child process with a memory cap, off the
event loop.

A suite's parser validates a problem by parsing its code (``ast``), and
Python's parser takes time and memory in proportion to the statements, not
the bytes (a 1 MB test of short statements takes seconds and most of a
gigabyte), in C, holding the GIL. The service hands that work to one child
process: an allowlisted environment (none of the engine's), an
address-space limit, a wall-clock limit enforced by killing it, and JSON
lines both ways, so what comes back is data, never objects. The child only
parses; no problem code runs in it. A child that dies, overruns or answers
out of shape is replaced, and the problem is refused (`InputError`).

Run as ``python -m aioeval.service._parsing`` (the child's side).
"""

from __future__ import annotations

import importlib
import resource
import sys
from collections.abc import Callable

import anyio
import anyio.abc
import msgspec
from anyio.streams.buffered import BufferedByteReceiveStream

from aioeval.errors import InputError, SandboxError
from aioeval.types import Problem

ParseFn = Callable[[bytes, str], list[Problem]]

CHILD_ENV = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
MEMORY_MB = 512
"""Address space the child may add to what its imports take."""
TIMEOUT_S = 10.0
"""Time a problem may take to parse, from when the child has its parser."""
START_S = 60.0
"""Time a child may take to start and import the suite's parser (the
machine's doing, not the problem's: past it the service is unavailable)."""
IMPORTED = b"imported\n"
REPLY_SLACK = 1 << 16
_WHO = "problem:"


class Request(msgspec.Struct, frozen=True):
    module: str
    name: str
    row: str
    source: str


class Found(msgspec.Struct, frozen=True):
    id: str
    fields: dict[str, str]


class Reply(msgspec.Struct, frozen=True):
    problems: list[Found] = []
    error: str | None = None
    spent: bool = False
    """The child ran out of memory or stack: replace it (what it holds is waste)."""


_REPLY = msgspec.json.Decoder(Reply)


class ParserProcess:
    """The parent's side: one child, one problem at a time, started on first
    use and restarted after a failure."""

    def __init__(self, *, timeout_s: float = TIMEOUT_S, memory_mb: int = MEMORY_MB) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.started = 0
        """Children started (one, unless some were killed)."""
        self._lock = anyio.Lock()
        self._proc: anyio.abc.Process | None = None
        self._reader: BufferedByteReceiveStream | None = None

    async def parse(self, parse: ParseFn, row: bytes, source: str) -> list[Problem]:
        """``parse(row, source)`` as the child runs it; InputError for a
        problem that does not parse, or not within the child's limits."""
        request = Request(parse.__module__, parse.__qualname__, row.decode(), source)
        line = msgspec.json.encode(request) + b"\n"
        async with self._lock:
            reply = await self._ask(line, max_reply=8 * len(line) + REPLY_SLACK)
            if reply.spent:
                await self.aclose()
        if reply.error is not None:
            raise InputError(reply.error)
        return [Problem(id=p.id, fields=p.fields) for p in reply.problems]

    async def _ask(self, line: bytes, max_reply: int) -> Reply:
        ok = False
        try:
            proc, reader = await self._child()
            assert proc.stdin is not None
            # The child says when it has the suite's parser: a slow start is
            # the machine's, and only the parse counts against the problem.
            try:
                with anyio.fail_after(START_S):
                    await proc.stdin.send(line)
                    raw = await reader.receive_until(b"\n", max_reply)
            except TimeoutError:
                raise SandboxError(
                    f"the problem parser did not start within {START_S:g} s"
                ) from None
            if raw + b"\n" == IMPORTED:
                with anyio.fail_after(self.timeout_s):
                    raw = await reader.receive_until(b"\n", max_reply)
            reply = _REPLY.decode(raw)
            ok = True
            return reply
        except TimeoutError:
            raise InputError(
                f"{_WHO} not parsed within {self.timeout_s:g} s; make it smaller"
            ) from None
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.IncompleteRead):
            raise InputError(
                f"{_WHO} its parser ran out of memory or died; make it smaller"
            ) from None
        except (anyio.DelimiterNotFound, msgspec.DecodeError):
            raise InputError(f"{_WHO} its parser answered out of shape") from None
        finally:
            if not ok:
                await self.aclose()

    async def _child(self) -> tuple[anyio.abc.Process, BufferedByteReceiveStream]:
        if self._proc is None or self._reader is None:
            self._proc = await anyio.open_process(
                [sys.executable, "-I", "-m", __name__, str(self.memory_mb)],
                stdin=-1,
                stdout=-1,
                stderr=-3,
                env=CHILD_ENV,
                start_new_session=True,
            )
            assert self._proc.stdout is not None
            self._reader = BufferedByteReceiveStream(self._proc.stdout)
            self.started += 1
        return self._proc, self._reader

    async def aclose(self) -> None:
        """Kill the child (the next parse starts another)."""
        proc, self._proc, self._reader = self._proc, None, None
        if proc is None:
            return
        with anyio.CancelScope(shield=True):
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
            await proc.aclose()


def _limit_memory(extra_mb: int) -> None:
    with open("/proc/self/statm") as fh:
        size = int(fh.read().split()[0]) * resource.getpagesize()
    cap = size + extra_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _answer(line: bytes, imported: Callable[[], None]) -> Reply:
    try:
        request = msgspec.json.decode(line, type=Request)
        parse: ParseFn = getattr(importlib.import_module(request.module), request.name)
        imported()
        problems = parse(request.row.encode(), request.source)
    except InputError as exc:
        return Reply(error=str(exc))
    except MemoryError:
        too_large = f"{_WHO} too large to parse within {sys.argv[1]} MB; make it smaller"
        return Reply(error=too_large, spent=True)
    except RecursionError:
        return Reply(error=f"{_WHO} nested too deeply to parse", spent=True)
    except Exception as exc:
        return Reply(error=f"{_WHO} cannot be parsed: {type(exc).__name__}: {exc}"[:500])
    return Reply(problems=[Found(id=p.id, fields=dict(p.fields)) for p in problems])


def main() -> None:
    _limit_memory(int(sys.argv[1]))
    out = sys.stdout.buffer

    def imported() -> None:
        out.write(IMPORTED)
        out.flush()

    for line in sys.stdin.buffer:
        out.write(msgspec.json.encode(_answer(line, imported)) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
