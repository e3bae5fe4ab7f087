"""The sandbox pool seam and its local implementation.

Suites and the pipeline only see `SandboxPool`: submit a program (optionally
with an expression whose value is returned as plain data), get an
`Outcome`. `LocalPool` keeps one template process per slot (see
``aioeval.sandbox.worker``); each template forks a fresh child per candidate.
Templates start from an absolute interpreter path with an allowlisted
environment and no site hooks, so nothing of the engine (API keys included)
is in the memory a candidate is forked from.

A template that dies or stops answering is an engine fault: the job's
outcome is ``infra_error``, the slot is restarted, and the job is retried
once on a fresh template before the infra_error is reported.
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
import anyio.abc
import msgspec
from anyio.streams.buffered import BufferedByteReceiveStream

from .errors import SandboxError
from .sandbox import protocol
from .sandbox.protocol import Limits, Outcome

BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


@runtime_checkable
class SandboxPool(Protocol):
    """Anything that runs candidate programs in isolation."""

    @property
    def layers(self) -> list[str]:
        """Isolation layers actually in force (recorded in summary.json)."""
        ...

    @property
    def size(self) -> int: ...

    async def run(self, program: str, value_expr: str | None = None) -> Outcome:
        """Run one program; never raises for candidate behaviour."""
        ...

    async def aclose(self) -> None: ...


def _infra(job_id: int, reason: str) -> Outcome:
    return Outcome(id=job_id, status="infra_error", reason=reason)


def worker_command(hash_seed: int | None) -> tuple[list[str], dict[str, str]]:
    """The template's argv and environment (allowlisted, never inherited)."""
    python = os.path.realpath(sys.executable)
    worker = str(resources.files("aioeval.sandbox").joinpath("worker.py"))
    sites: list[str] = []
    for path in (
        str(Path(msgspec.__file__).resolve().parent.parent),
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    ):
        if path not in sites:
            sites.append(path)
    env = dict(BASE_ENV)
    if hash_seed is None:
        flags = ["-I", "-S", "-B"]
    else:
        # -I would also ignore PYTHONHASHSEED; the environment is ours alone,
        # so -s -S -P gives the same isolation with a reproducible hash seed.
        flags = ["-s", "-S", "-P", "-B"]
        env["PYTHONHASHSEED"] = str(hash_seed)
    return [python, *flags, worker, *sites], env


class _Slot:
    """One template process and its framed pipes."""

    def __init__(self, index: int, pool: LocalPool) -> None:
        self.index = index
        self.pool = pool
        self.proc: anyio.abc.Process | None = None
        self.reader: BufferedByteReceiveStream | None = None
        self.ready: protocol.Ready | None = None
        self.broken = False

    async def start(self) -> None:
        cmd, env = worker_command(self.pool.hash_seed)
        work_root = os.path.join(self.pool.work_root, f"slot{self.index}")
        try:
            proc = await anyio.open_process(
                cmd,
                stdin=-1,
                stdout=-1,
                stderr=-3 if not self.pool.debug else None,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start sandbox template: {exc}") from None
        self.proc = proc
        assert proc.stdout is not None and proc.stdin is not None
        self.reader = BufferedByteReceiveStream(proc.stdout)
        hello = protocol.Hello(
            limits=self.pool.limits,
            env=dict(BASE_ENV),
            work_root=work_root,
            isolation=self.pool.isolation,
        )
        try:
            with anyio.fail_after(30):
                await proc.stdin.send(protocol.encode_frame(hello))
                self.ready = msgspec.msgpack.decode(await self._frame(), type=protocol.Ready)
        except Exception as exc:
            await self.kill()
            raise SandboxError(f"sandbox template failed to start: {exc!r}") from None
        if self.pool.isolation == "strict" and self.ready.missing:
            await self.kill()
            name = self.ready.missing[0]
            why = next((w for w in self.ready.warnings if w.startswith(name)), name)
            raise SandboxError(f"isolation=strict refused: {why}")
        self.broken = False

    async def _frame(self) -> bytes:
        assert self.reader is not None
        head = await self.reader.receive_exactly(protocol.HEADER.size)
        (size,) = protocol.HEADER.unpack(head)
        if size > protocol.MAX_FRAME:
            raise SandboxError("oversized frame from template")
        return await self.reader.receive_exactly(size)

    async def run(self, job: protocol.Job) -> Outcome:
        if self.proc is None or self.broken:
            await self.kill()
            await self.start()
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        try:
            with anyio.fail_after(self.pool.limits.wall_s + 30):
                await proc.stdin.send(protocol.encode_frame(job))
                out = self.pool.decoder.decode(await self._frame())
        except TimeoutError:
            self.broken = True
            return _infra(job.id, "sandbox template stopped answering")
        except (
            anyio.EndOfStream,
            anyio.IncompleteRead,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            msgspec.DecodeError,
            SandboxError,
        ) as exc:
            self.broken = True
            return _infra(job.id, f"sandbox template died ({type(exc).__name__})")
        except BaseException:
            # Cancelled mid-job: the template still owes us a frame, so it is
            # out of step; kill it rather than reuse it.
            self.broken = True
            raise
        if out.id != job.id:
            self.broken = True
            return _infra(job.id, "sandbox protocol out of step")
        return out

    async def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                if proc.stdin is not None:
                    await proc.stdin.aclose()  # the template kills its children on hang-up
            except Exception:
                pass
            with anyio.move_on_after(2):
                await proc.wait()
            if proc.returncode is None:
                proc.kill()
                with anyio.move_on_after(2):
                    await proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    try:
                        await stream.aclose()
                    except Exception:
                        pass
            if self.ready is not None:
                _remove_cgroups(self.ready.cgroups)


class LocalPool:
    """A bounded pool of template processes on this machine.

    Use as ``async with LocalPool(...) as pool``. ``run`` waits for a free
    slot, so at most ``workers`` candidates execute at once. ``isolation``
    (strict, best, minimal) selects the templates' layers (see
    ``aioeval.sandbox.layers``); strict makes `start` raise SandboxError
    naming the first layer this machine cannot provide.
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        limits: Limits | None = None,
        hash_seed: int | None = 0,
        debug: bool = False,
        isolation: str = "best",
    ) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.limits = limits or Limits()
        self.hash_seed = hash_seed
        self.isolation = isolation
        self.debug = debug
        self.decoder = msgspec.msgpack.Decoder(Outcome)
        self.work_root = ""
        self._slots: list[_Slot] = []
        self._idle: list[_Slot] = []
        self._sem = anyio.Semaphore(self.workers)
        self._ids = itertools.count(1)
        self.infra_retries = 0

    @property
    def size(self) -> int:
        return self.workers

    @property
    def layers(self) -> list[str]:
        for slot in self._slots:
            if slot.ready is not None:
                return list(slot.ready.layers)
        return []

    @property
    def warnings(self) -> list[str]:
        for slot in self._slots:
            if slot.ready is not None:
                return list(slot.ready.warnings)
        return []

    @property
    def missing(self) -> list[str]:
        """Layers the isolation mode asked for that this machine lacks."""
        for slot in self._slots:
            if slot.ready is not None:
                return list(slot.ready.missing)
        return []

    async def start(self) -> None:
        self.work_root = tempfile.mkdtemp(prefix="aioeval-sandbox-")
        # Candidates running under their own uid must traverse to their dir.
        os.chmod(self.work_root, 0o711)
        self._slots = [_Slot(i, self) for i in range(self.workers)]
        try:
            async with anyio.create_task_group() as tg:
                for slot in self._slots:
                    tg.start_soon(slot.start)
        except BaseException as exc:
            await self.aclose()
            # Slots start in a task group; surface a refusal (e.g. strict
            # isolation) as the SandboxError it is, not an ExceptionGroup.
            if isinstance(exc, BaseExceptionGroup):
                refusal = exc.subgroup(lambda e: isinstance(e, SandboxError))
                if refusal is not None:
                    raise refusal.exceptions[0] from None
            raise
        self._idle = list(self._slots)

    async def __aenter__(self) -> LocalPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run(self, program: str, value_expr: str | None = None) -> Outcome:
        job = protocol.Job(id=next(self._ids), program=program, value_expr=value_expr)
        async with self._sem:
            slot = self._idle.pop()
            try:
                out = await slot.run(job)
                if out.status == "infra_error":
                    # A fresh id: the dead template may have left this job's
                    # work directory behind.
                    self.infra_retries += 1
                    retry = protocol.Job(id=next(self._ids), program=program, value_expr=value_expr)
                    out = await slot.run(retry)
                    out = msgspec.structs.replace(out, id=job.id)
            finally:
                self._idle.append(slot)
        return out

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for slot in self._slots:
                    tg.start_soon(slot.kill)
            if self.work_root:
                shutil.rmtree(self.work_root, ignore_errors=True)


def _remove_cgroups(paths: list[str]) -> None:
    """Remove a dead template's cgroups, killing anything still inside."""
    for path in reversed(paths):
        for _ in range(100):
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                try:
                    with open(os.path.join(path, "cgroup.procs"), "rb") as fh:
                        pids = [int(p) for p in fh.read().split()]
                except OSError:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, 9)
                    except OSError:
                        pass
                time.sleep(0.01)


def pool_facts(pool: object) -> dict[str, Any]:
    """Executor facts for summary.json, from any pool (a LocalPool is one
    node and no actors)."""
    return {
        "executor": getattr(pool, "executor", "local"),
        "actors": getattr(pool, "actors", 0),
        "nodes": getattr(pool, "nodes", 1),
        "infra_retries": getattr(pool, "infra_retries", 0),
    }
