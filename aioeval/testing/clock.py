"""A fake clock: virtual time for rate-limit and backoff tests.

It satisfies `aioeval.generation.retry.Clock`, so the retry loop and the
rate limiter run on it unchanged; a minute of backoff then takes
microseconds and is exactly reproducible.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

import anyio
import anyio.lowlevel


class FakeClock:
    """Virtual time for tests: ``sleep`` parks the task until the clock is
    advanced past its deadline. Run `autojump` in the test's task group to
    jump straight to the next deadline whenever every task is blocked, so a
    minute of backoff takes microseconds and is exactly reproducible."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        event = anyio.Event()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), event))
        await event.wait()

    async def wait(self, event: anyio.Event, seconds: float) -> None:
        async with anyio.create_task_group() as tg:

            async def timer() -> None:
                await self.sleep(seconds)
                tg.cancel_scope.cancel()

            tg.start_soon(timer)
            await event.wait()
            tg.cancel_scope.cancel()

    def advance(self, seconds: float) -> None:
        self._now += seconds
        while self._sleepers and self._sleepers[0][0] <= self._now:
            heapq.heappop(self._sleepers)[2].set()

    async def autojump(self) -> None:
        """Forever: once all other tasks are blocked, jump to the next deadline."""
        while True:
            await _all_tasks_blocked()
            if self._sleepers:
                self.advance(max(self._sleepers[0][0] - self._now, 0.0))
            else:
                await anyio.sleep(0)


async def _all_tasks_blocked() -> None:
    """`anyio.wait_all_tasks_blocked`, minus the 0.1 s real sleep it polls
    with on asyncio (a simulated minute would take real minutes): yield to
    the loop until every other task waits on a future."""
    try:
        this = asyncio.current_task()
    except RuntimeError:
        this = None
    if this is None:  # not on asyncio: the backend's own check is exact
        await anyio.wait_all_tasks_blocked()
        return
    while True:
        await asyncio.sleep(0)
        for task in asyncio.all_tasks():
            waiter = getattr(task, "_fut_waiter", None)
            if task is not this and (waiter is None or waiter.done()):
                break
        else:
            return
