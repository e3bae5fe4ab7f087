"""The local executor: a bounded pool of sandbox slots on this machine.

Each slot keeps one template process (see ``aioeval.sandbox.process.worker``), which
forks a fresh child per candidate, and, for `Checked` tasks, one verifier
process (see ``aioeval.sandbox.strict.verifier``), which runs the tests and never
runs model code. Both start from an absolute interpreter path with an
allowlisted environment and no site hooks, so nothing of the engine (API
keys included) is in the memory a candidate is forked from.

A template or verifier that dies or stops answering is an engine fault: the
job's outcome is ``infra_error``, the slot is restarted, and the job is run
once more on fresh processes. If the fresh processes die on the same job
too, the candidate did it (a crash it can provoke is its own failure, so it
can never drop out of n): the outcome is ``error``.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import tempfile

import anyio
import msgspec

from aioeval.config import RunConfig
from aioeval.errors import SandboxError
from aioeval.sandbox import frames
from aioeval.sandbox.protocol import Limits, Outcome, Program, Task

from ._process import default_hidden
from ._slot import Slot, SlotSettings
from .base import ExecutorFacts


def from_config(cfg: RunConfig) -> LocalPool:
    """The pool a run's configuration asks for."""
    sb = cfg.params.sandbox
    limits = Limits(
        cpu_s=cfg.params.timeout_s,
        wall_s=cfg.wall_timeout_s,
        memory_mb=sb.memory_mb,
        fsize_mb=sb.fsize_mb,
        nofile=sb.nofile,
        output_tail=sb.output_tail,
        disk_mb=sb.disk_mb,
    )
    return LocalPool(
        workers=cfg.workers,
        limits=limits,
        hash_seed=sb.hash_seed,
        isolation=sb.isolation,
        verifiers=cfg.params.scoring != "official",
    )


class LocalPool:
    """A bounded pool of sandbox slots on this machine.

    Use as ``async with LocalPool(...) as pool``. ``execute`` waits for a free
    slot, so at most ``workers`` candidates execute at once. ``isolation``
    (strict, best, minimal) selects the templates' layers (see
    ``aioeval.sandbox.isolation.layers``); strict makes `start` raise SandboxError
    naming the first layer this machine cannot provide. ``hide`` lists
    directories candidates must not be able to read (answer keys).
    ``verifiers`` starts each slot's trusted verifier with its template (a
    strict run needs them from its first check) instead of on first need.
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
        verifiers: bool = False,
    ) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.limits = limits or Limits()
        self.hash_seed = hash_seed
        self.isolation = isolation
        self.hide = default_hidden() if hide is None else list(hide)
        self.debug = debug
        self.verifiers = verifiers
        self.work_root = ""
        self._slots: list[Slot] = []
        self._idle: list[Slot] = []
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

    def facts(self) -> ExecutorFacts:
        ready = next((s.verifier_ready for s in self._slots if s.verifier_ready), None)
        return ExecutorFacts(
            executor="local",
            infra_retries=self.infra_retries,
            verifier_layers=list(ready.layers) if ready is not None else [],
            verifier_missing=list(ready.missing) if ready is not None else [],
        )

    async def start(self) -> None:
        self.work_root = tempfile.mkdtemp(prefix="aioeval-sandbox-")
        # Candidates running under their own uid must traverse to their dir.
        os.chmod(self.work_root, 0o711)
        settings = SlotSettings(
            limits=self.limits,
            hash_seed=self.hash_seed,
            isolation=self.isolation,
            hide=self.hide,
            work_root=self.work_root,
            debug=self.debug,
            spin_s=spin_for(self.workers),
            verifiers=self.verifiers,
        )
        self._slots = [Slot(i, settings) for i in range(self.workers)]
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
                    # A template retired by its own fault (a child it could
                    # not set up) did not die of the candidate.
                    first, died = out.reason, slot.broken and not out.retire
                    out = await slot.run(next(self._ids), task)
                    if out.status == "infra_error" and died and slot.broken and not out.retire:
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
                # Whatever the candidates left there can be a deep tree: not
                # on the event loop, which may be serving others (embedding).
                await anyio.to_thread.run_sync(
                    functools.partial(shutil.rmtree, self.work_root, ignore_errors=True)
                )


def spin_for(workers: int) -> float:
    """Each end of a strict call channel polls before it sleeps only when
    the pool leaves a core for every end that may be busy at once (two per
    slot); otherwise a poller takes the core its answer needs."""
    cores = len(os.sched_getaffinity(0))
    return frames.SPIN_S if 2 * workers <= cores else 0.0
