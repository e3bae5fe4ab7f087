"""Backpressure between generation and the sandboxes: the window.

Requests in flight are bounded by the rate limiter (at most
``target.rate_limit.max_concurrency``); the window bounds *samples*: those
asked for and not yet answered, plus those answered and not yet taken by a
sandbox judge (waiting to enter the pipeline's stream, or in its buffer).
A request starts only when its samples fit.

Its size is the pipeline's buffer (``params.buffer``, default
max(64, 4 x workers), read from the stream itself), or ``max_concurrency``
when that is larger: the buffer must not cap the concurrency the config
asks for (a slow, remote endpoint needs every request in flight it may
have). So completions waiting for a sandbox never exceed the larger of the
two, and when the sandboxes are the slower stage generation waits instead
of piling completions up in memory.

The pipeline's stream says when a judge takes an item
(`aioeval.run.contract.ObservedSend`), and the window knows when it hands
one on: a full window waits for either, never polls. Given a plain stream
(no such signal), it counts only the samples generation holds itself, and
the stream's own buffer bounds the rest.
"""

from __future__ import annotations

import math

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from aioeval.run.contract import ObservedSend, WorkItem


class Window:
    def __init__(
        self, send: MemoryObjectSendStream[WorkItem], *, buffer: int, concurrency: int
    ) -> None:
        """``buffer``: the pipeline's buffer, when the stream does not say."""
        self.send = send
        own = send.statistics().max_buffer_size
        stream = int(own) if 0 < own < math.inf else buffer
        self.size = max(1, stream, concurrency)
        self._observed = send if isinstance(send, ObservedSend) else None
        self.held = 0
        """Samples asked for or answered and not yet handed on."""
        self._freed = anyio.Event()

    def used(self) -> int:
        if self._observed is None:
            return self.held
        return self._observed.statistics().current_buffer_used + self.held

    async def reserve(self, k: int) -> None:
        """Wait until ``k`` more samples fit, then hold their places."""
        while self.used() + k > self.size:
            # Both events are taken before waiting, so no wake-up is lost.
            events = [self._freed]
            if self._observed is not None:
                events.append(self._observed.next_take())
            await _first_of(events)
        self.held += k

    async def hand_on(self, item: WorkItem) -> None:
        """Send one held sample on (its place is free once a judge takes it)."""
        try:
            await self.send.send(item)
        finally:
            self.held -= 1
            self._freed.set()
            self._freed = anyio.Event()


async def _first_of(events: list[anyio.Event]) -> None:
    if len(events) == 1:
        await events[0].wait()
        return
    async with anyio.create_task_group() as tg:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        for event in events:
            tg.start_soon(wait, event)
