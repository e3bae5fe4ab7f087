"""Micro-batched dispatch of tasks to remote executors, with no Ray in it.

The executor seam is per task, so the first caller to find no open batch
becomes its leader: it waits a few milliseconds (or until the batch holds
``batch_max`` tasks) and then for a target with room. Tasks arriving
meanwhile join that batch, so batches grow by themselves when the targets
are busy and stay small when they are idle. Each target holds at most
``in_flight`` batches at once; a leader with no target free waits, its
followers wait, and the pipeline's bounded streams carry that backpressure
back to generation.

The remote call is injected (`RemoteCall`): Ray's in production, a plain
coroutine in tests. It answers a batch's outcomes in order, or raises
`TargetLost` (the target is gone: the batch goes to another target and its
tasks count in ``redispatched``) or `BatchFailed` (every task of that batch
gets an ``infra_error`` outcome with the reason; other batches go on). When
every target is lost, one leader asks the injected ``replenish`` for more;
if none come, the waiting batches fail the same way. A candidate's own
behaviour never raises here: it is in the outcomes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import anyio

from aioeval.sandbox.protocol import Outcome, Task

ALL_LOST = "ray: every sandbox actor was lost"
CANCELLED = "ray: dispatch cancelled"
OUT_OF_STEP = "ray: sandbox actor answered out of step"


class Target:
    """One remote executor as the dispatcher sees it: its size and load."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        """Sandbox slots it runs at once (the least loaded per slot is chosen)."""
        self.in_flight = 0
        """Batches sent to it and not yet answered."""
        self.alive = True


T = TypeVar("T", bound=Target)

RemoteCall = Callable[[T, list[Task]], Awaitable[list[Outcome]]]
"""Runs a batch on a target: its outcomes in order, or `TargetLost` / `BatchFailed`."""


class TargetLost(Exception):
    """The target died or stopped answering; its batch may run elsewhere."""


class BatchFailed(Exception):
    """The batch cannot run; ``str(exc)`` is the reason its outcomes carry."""


class _Batch:
    """Tasks collected by one leader; followers wait on ``done``."""

    def __init__(self) -> None:
        self.jobs: list[Task] = []
        self.outcomes: list[Outcome] = []
        self.full = anyio.Event()
        self.done = anyio.Event()

    def finish(self, outcomes: list[Outcome]) -> None:
        self.outcomes = outcomes
        self.done.set()

    def fail(self, reason: str) -> None:
        self.finish([Outcome(id=0, status="infra_error", reason=reason) for _ in self.jobs])


class Dispatcher(Generic[T]):
    """Groups concurrent `execute` calls into batches for the least loaded target.

    Made inside the event loop (it holds anyio events).
    """

    def __init__(
        self,
        call: RemoteCall[T],
        *,
        batch_max: int = 1,
        batch_wait_s: float = 0.002,
        in_flight: int = 2,
        on_lost: Callable[[T], None] | None = None,
        replenish: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.batch_max = batch_max
        """Tasks per batch: a batch this full leaves without waiting."""
        self.batch_wait_s = batch_wait_s
        """How long a leader waits for company before looking for a target."""
        self.in_flight = in_flight
        """Batches each target may hold at once (the per-target backpressure bound)."""
        self.targets: list[T] = []
        """Every target added, lost ones included."""
        self.redispatched = 0
        """Tasks sent again because their target was lost."""
        self.batches = 0
        """Batches answered."""
        self._call = call
        self._on_lost = on_lost
        self._replenish = replenish
        self._open: _Batch | None = None
        self._room = anyio.Event()
        self._replenish_lock = anyio.Lock()

    @property
    def live(self) -> list[T]:
        return [t for t in self.targets if t.alive]

    def add(self, target: T) -> None:
        """A target ready for batches (at start, or a replacement)."""
        self.targets.append(target)
        self._wake()

    async def execute(self, task: Task) -> Outcome:
        """The task's outcome, after it has run in some batch."""
        batch = self._open
        leader = batch is None
        if batch is None:
            batch = self._open = _Batch()
        index = len(batch.jobs)
        batch.jobs.append(task)
        if len(batch.jobs) >= self.batch_max:
            self._seal(batch)
            batch.full.set()
        if leader:
            try:
                await self._lead(batch)
            finally:
                self._seal(batch)
                if not batch.done.is_set():
                    batch.fail(CANCELLED)
        else:
            await batch.done.wait()
        return batch.outcomes[index]

    async def ping(self) -> float:
        """Seconds for one empty batch to reach a target and come back."""
        target = await self._acquire()
        t0 = anyio.current_time()
        await self._send(target, [])
        return anyio.current_time() - t0

    async def _lead(self, batch: _Batch) -> None:
        with anyio.move_on_after(self.batch_wait_s):
            await batch.full.wait()
        try:
            target = await self._acquire()
        except BatchFailed as exc:
            self._seal(batch)
            batch.fail(str(exc))
            return
        # Tasks kept joining while we waited for room; from here on the batch is closed.
        self._seal(batch)
        while True:
            try:
                batch.finish(await self._send(target, batch.jobs))
                return
            except TargetLost:
                self.redispatched += len(batch.jobs)
            except BatchFailed as exc:
                batch.fail(str(exc))
                return
            try:
                target = await self._acquire()
            except BatchFailed as exc:
                batch.fail(str(exc))
                return

    def _seal(self, batch: _Batch) -> None:
        if self._open is batch:
            self._open = None

    async def _acquire(self) -> T:
        """The least loaded live target with room; waits while all are full."""
        while True:
            live = self.live
            if not live:
                await self._replenish_all_lost()
                continue
            free = [t for t in live if t.in_flight < self.in_flight]
            if free:
                target = min(free, key=lambda t: (t.in_flight / t.slots, -t.slots))
                target.in_flight += 1
                return target
            await self._room.wait()

    async def _send(self, target: T, jobs: list[Task]) -> list[Outcome]:
        """One remote call on an acquired target, which it then releases."""
        try:
            outcomes = await self._call(target, jobs)
        except TargetLost:
            self._lose(target)
            raise
        finally:
            target.in_flight -= 1
            self._wake()
        self.batches += 1
        if len(outcomes) != len(jobs):
            raise BatchFailed(OUT_OF_STEP)
        return outcomes

    def _lose(self, target: T) -> None:
        if target.alive:
            target.alive = False
            if self._on_lost is not None:
                self._on_lost(target)

    def _wake(self) -> None:
        """Let every leader waiting for room look again."""
        self._room.set()
        self._room = anyio.Event()

    async def _replenish_all_lost(self) -> None:
        """Every target is gone: one leader asks for replacements, the rest wait for it."""
        async with self._replenish_lock:
            if self.live:
                return
            if self._replenish is not None:
                await self._replenish()
            if not self.live:
                raise BatchFailed(ALL_LOST)
