"""One sandbox slot: a template, its verifier (started on first need) and
the link between them. See `aioeval.executors.local` for the whole pool."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

import anyio
import msgspec

from aioeval.errors import SandboxError
from aioeval.sandbox import protocol
from aioeval.sandbox.protocol import Call, Checked, Outcome, Program, Task
from aioeval.sandbox.protocol.served import ceiling_s

from . import _served
from ._process import BASE_ENV, TEMPLATE, VERIFIER, Process, remove_cgroups


@dataclass(frozen=True)
class SlotSettings:
    """What every slot of one pool shares."""

    limits: protocol.Limits
    hash_seed: int | None
    isolation: str
    hide: list[str] = field(default_factory=list)
    work_root: str = ""
    debug: bool = False
    spin_s: float = 0.0
    """How long each end of a call channel polls before it sleeps."""
    verifiers: bool = False
    """Start each slot's verifier with its template, not on its first check."""
    layers: list[str] = field(default_factory=list)
    """The layers of the pool's first template: the run reports them, so
    every template started later (another slot, a restart) must have them."""
    verifier_layers: list[str] = field(default_factory=list)
    """The same for the pool's first verifier."""


_outcome = msgspec.msgpack.Decoder(Outcome)
_check_result = msgspec.msgpack.Decoder(protocol.CheckResult)
_verifier_ready = msgspec.msgpack.Decoder(protocol.VerifierReady)

VERIFIER_BASE_MB = 512
"""The verifier's own memory on top of the candidates' limit (its address
space is capped at both together)."""
VERIFIER_DISK_MB = 64
"""The most a check's work directory holds (its temporary files)."""
VERIFIER_GRACE_S = 2.0
"""How long the verifier may still take to report after a child that ended
badly (whose verdict is then the child's own)."""
STRICT_NAMED = "strict scoring"
"""How a verifier's reason that names what it could not follow begins."""


def _infra(job_id: int, reason: str) -> Outcome:
    return Outcome(id=job_id, status="infra_error", reason=reason)


_FAULTS = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    msgspec.DecodeError,
    SandboxError,
)


class Slot:
    """One template, its verifier (started with it, or on first need) and
    the link between them."""

    def __init__(self, index: int, pool: SlotSettings) -> None:
        self.index = index
        self.pool = pool
        self.template: Process | None = None
        self.verifier: Process | None = None
        self.link: socket.socket | None = None
        """The verifier's end of the link, until the verifier owns it."""
        self.ready: protocol.Ready | None = None
        self.verifier_ready: protocol.VerifierReady | None = None
        """The verifier's cgroups, layers in force and missing (strict
        refuses a missing one, as for templates)."""
        self.broken = False

    async def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        link_fd = ours.fileno()  # pass_fds keeps the number in the child
        try:
            self.template = await Process.spawn(
                self.pool.hash_seed, self.pool.debug, TEMPLATE, link_fd
            )
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
            spin_s=self.pool.spin_s,
            shared_dir=self._shared_dir(),
        )
        try:
            with anyio.fail_after(30):
                async with anyio.create_task_group() as tg:
                    if self.pool.verifiers:
                        tg.start_soon(self._start_verifier)
                    await self.template.send(hello)
                    self.ready = msgspec.msgpack.decode(
                        await self.template.frame(), type=protocol.Ready
                    )
        except Exception as exc:
            await self.kill()
            raise SandboxError(f"sandbox template failed to start: {exc!r}") from None
        await self._refuse_less_than_strict()
        await self._refuse_less_than_reported()
        self.broken = False

    async def _refuse_less_than_reported(self) -> None:
        """Kill the slot and raise SandboxError when its template (or its
        verifier) lacks a layer the pool's first one had: the run reports
        those as in force, and must not go on without them."""
        ready = self.ready
        assert ready is not None
        await self._refuse_fewer("template", self.pool.layers, ready.layers, ready.warnings)
        if self.verifier_ready is not None:
            have = self.verifier_ready
            await self._refuse_fewer(
                "verifier", self.pool.verifier_layers, have.layers, have.warnings
            )

    async def _refuse_fewer(
        self, what: str, reported: list[str], layers: list[str], warnings: list[str]
    ) -> None:
        if not reported:
            reported.extend(layers)
            return
        lost = [name for name in reported if name not in layers]
        if lost:
            await self.kill()
            why = "; ".join(warnings) or "no reason given"
            raise SandboxError(
                f"a sandbox {what} started without {', '.join(lost)}, which this run "
                f"started with ({why})"
            )

    async def _refuse_less_than_strict(self) -> None:
        """Under ``isolation: strict``, kill the slot and raise SandboxError
        naming the first layer its template or its verifier lacks."""
        ready = self.ready
        assert ready is not None
        if self.pool.isolation != "strict":
            return
        for what, missing, warnings in (
            ("", ready.missing, ready.warnings),
            ("the verifier has no ", *self._verifier_gaps()),
        ):
            if missing:
                await self.kill()
                name = missing[0]
                why = next((w for w in warnings if w.startswith(name)), name)
                raise SandboxError(f"isolation=strict refused: {what}{why}")

    def _verifier_gaps(self) -> tuple[list[str], list[str]]:
        have = self.verifier_ready
        return ([], []) if have is None else (have.missing, have.warnings)

    def _shared_dir(self) -> str:
        """The path where a served job's candidate and check share a work
        directory ("" without a verifier or a work root)."""
        root = self.pool.work_root
        return os.path.join(root, f"shared{self.index}") if root and self.pool.verifiers else ""

    async def _start_verifier(self) -> Process:
        assert self.link is not None, "the verifier's link belongs to a live template"
        link_fd = self.link.fileno()
        try:
            # Recorded before anything else is awaited: a cancellation from
            # here on must still find it to kill.
            verifier = self.verifier = await Process.spawn(
                self.pool.hash_seed, self.pool.debug, VERIFIER, link_fd
            )
        finally:
            self.link.close()
            self.link = None
        limits = self.pool.limits
        root = self.pool.work_root
        hello = protocol.VerifierHello(
            link_fd=link_fd,
            cpu_s=limits.cpu_s,
            wall_s=limits.wall_s,
            memory_mb=limits.memory_mb + VERIFIER_BASE_MB if limits.memory_mb > 0 else 0,
            spin_s=self.pool.spin_s,
            isolation=self.pool.isolation,
            work_root=os.path.join(root, f"verifier{self.index}") if root else "",
            disk_mb=min(limits.disk_mb, VERIFIER_DISK_MB),
            fsize_mb=limits.fsize_mb,
            nofile=limits.nofile,
            hide=self.pool.hide,
            shared_dir=self._shared_dir(),
        )
        await verifier.send(hello)
        with anyio.fail_after(30):
            self.verifier_ready = _verifier_ready.decode(await verifier.frame())
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
            # are out of step; kill them now (a service's other callers go
            # on), and the next job starts the slot afresh.
            self.broken = True
            with anyio.CancelScope(shield=True):
                await self.kill()
            raise

    async def _exchange(
        self,
        job_id: int,
        task: Program | Call | protocol.Serve,
        check: protocol.Check | None = None,
    ) -> Outcome:
        """Run one job on the template; a served job's `check` goes to the
        verifier just after it, so the fork and the child's setup overlap
        the second write."""
        template = self.template
        assert template is not None
        with anyio.fail_after(self.pool.limits.for_task(task.cpu_s).wall_s + 30):
            await template.send_raw(protocol.encode_job(job_id, task))
            if check is not None:
                assert self.verifier is not None
                await self.verifier.send(check)
            out = _outcome.decode(await template.frame())
            if out.reason_size:
                raw = await template.reader.receive_exactly(out.reason_size)
                text = raw.decode("utf-8", "replace")
                reason = f"{out.reason}; {text}" if out.reason else text
                out = msgspec.structs.replace(out, reason=reason, reason_size=0)
            if out.tail_size:
                tail = await template.reader.receive_exactly(out.tail_size)
                out = msgspec.structs.replace(
                    out, output_tail=tail.decode("utf-8", "replace"), tail_size=0
                )
        if out.id != job_id:
            raise SandboxError("sandbox protocol out of step")
        if out.retire:
            self.broken = True  # the template exits: the next job gets a fresh one
        return out

    async def _run_checked(self, job_id: int, task: Checked) -> Outcome:
        """The child answers calls; the verifier runs the test; the verdict
        is the verifier's unless the child ended badly (killed, timed out,
        out of memory), which is never a pass."""
        if self.verifier is None:
            self.verifier = await self._start_verifier()
            await self._refuse_less_than_strict()
            await self._refuse_less_than_reported()
        verifier = self.verifier
        asked = protocol.Check(
            id=job_id,
            setup=task.setup,
            driver=task.driver,
            entry=task.entry,
            prelude=task.prelude,
            cpu_s=task.cpu_s,
        )
        serve = protocol.Serve(program=task.program, entry=task.entry, cpu_s=task.cpu_s)
        child = await self._exchange(job_id, serve, asked)
        if child.status != "exited":
            # The verdict is the child's (timeout, error): never wait long on
            # a test that a candidate's values may have sent into a slow loop.
            with anyio.move_on_after(VERIFIER_GRACE_S):
                check = self._judged(job_id, await verifier.frame())
                if child.status == "timeout":
                    # What strict could not follow on the way, and the calls
                    # it made between the processes (the verdict stays the child's).
                    return _served.timed_out(child, check, STRICT_NAMED)
                return child
            # The verifier is stuck in a test: the whole slot restarts, with
            # a fresh link (the template's end of the old one is spoken for).
            self.broken = True
            return child
        # The verifier ends a check past its CPU budget (with its allowance,
        # at most the ceiling), or past that and the wall-clock limit; one
        # still silent after that is stuck.
        limits = self.pool.limits.for_task(task.cpu_s)
        budget = ceiling_s(limits.cpu_s) + limits.wall_s
        with anyio.move_on_after(budget + VERIFIER_GRACE_S):
            check = self._judged(job_id, await verifier.frame())
            over = _served.over_share(child, check, limits.cpu_s)
            if over is not None:
                return over
            check = _served.judged(check, STRICT_NAMED)
            tail = child.output_tail
            if check.output:
                tail = (tail + "\n" if tail else "") + "[the test printed]\n" + check.output
            return msgspec.structs.replace(
                child,
                status=check.status,
                reason=check.reason,
                output_tail=tail,
                retire=child.retire or check.retire,
            )
        self.broken = True
        return self._too_long(child, f"{budget:g}s")

    def _judged(self, job_id: int, frame: bytes) -> protocol.CheckResult:
        """The verifier's result for this job; a verifier that retires (or
        could not set a check up) takes its slot with it."""
        check = _check_result.decode(frame)
        if check.id != job_id:
            raise SandboxError("verifier protocol out of step")
        if check.retire:
            self.broken = True
        return check

    @staticmethod
    def _too_long(child: Outcome, what: str) -> Outcome:
        reason = f"the verifier could not finish judging this answer within {what}"
        return msgspec.structs.replace(child, status="timeout", reason=reason)

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
            await remove_cgroups(self.ready.cgroups)
        if verifier is not None and self.verifier_ready is not None:
            await remove_cgroups(self.verifier_ready.cgroups)
        self.verifier_ready = None
