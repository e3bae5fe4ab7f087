"""The pipeline stages, wired by one anyio task group:

    producer --(work, buffer B)--> judges x 2W --(results, W)--> sink

B (``params.buffer``, default max(64, 4 x workers)) is the backpressure: when
every sandbox slot is busy and B candidates are waiting, the producer
(generation, for endpoint runs) blocks instead of piling completions up in
memory. Each judge signals `TakeSignal` when it takes an item, so a producer
that counts what waits in the stream (generation's window) is woken instead
of polling the level. The sink journals each result as soon as it exists and
folds it into streaming counts; nothing per candidate is kept after that.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import cast

import anyio
from anyio.streams.memory import (
    MemoryObjectReceiveStream,
    MemoryObjectSendStream,
    MemoryObjectStreamStatistics,
)

from aioeval.run.contract import Producer, WorkItem
from aioeval.run.journal import Journal
from aioeval.run.judge import Judge
from aioeval.run.resume import GenerationRecord
from aioeval.types import Candidate, CandidateResult

Sink = Callable[[CandidateResult], Awaitable[None]]


class TakeSignal:
    """Set each time a consumer takes an item off the work stream."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = anyio.Event()

    def next(self) -> anyio.Event:
        """The event the next `notify` sets."""
        return self._event


async def run_stages(
    producer: Producer,
    judge: Judge,
    sink: Sink,
    *,
    workers: int,
    buffer: int,
    taken: TakeSignal | None = None,
) -> None:
    send_work, recv_work = anyio.create_memory_object_stream[WorkItem](buffer)
    send_res, recv_res = anyio.create_memory_object_stream[CandidateResult](workers)

    async def produce() -> None:
        async with send_work:
            await producer(send_work)

    async def execute(
        recv: MemoryObjectReceiveStream[WorkItem], send: MemoryObjectSendStream[CandidateResult]
    ) -> None:
        async with recv, send:
            async for item in recv:
                if taken is not None:
                    taken.notify()
                await send.send(await judge.judge(item))

    async def write() -> None:
        async with recv_res:
            async for result in recv_res:
                await sink(result)

    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        # Two judges per slot: while one waits for its outcome frame the
        # other is already queued, so a slot never idles between candidates.
        async with recv_work, send_res:
            for _ in range(max(1, 2 * workers)):
                tg.start_soon(execute, recv_work.clone(), send_res.clone())
        tg.start_soon(write)


class _JournalingSend:
    """The producer's view of the work stream: drops samples already done,
    journals each new generation the moment it arrives, then sends into the
    real bounded stream, so the producer still feels its backpressure (and
    can read its fill level through ``statistics`` and learn when a judge
    takes an item: `aioeval.run.contract.ObservedSend`)."""

    def __init__(
        self,
        send: MemoryObjectSendStream[WorkItem],
        skip: set[tuple[str, int]],
        gen_journal: Journal | None,
        taken: TakeSignal,
    ) -> None:
        self._send = send
        self._skip = skip
        self._journal = gen_journal
        self._taken = taken

    def _admit(self, item: WorkItem) -> bool:
        key = (item.candidate.problem_id, item.candidate.sample_index)
        if key in self._skip:
            return False
        if self._journal is not None and item.verdict is None:
            self._journal.write(GenerationRecord(candidate=item.candidate))
        return True

    async def send(self, item: WorkItem) -> None:
        if self._admit(item):
            await self._send.send(item)

    def send_nowait(self, item: WorkItem) -> None:
        if self._admit(item):
            self._send.send_nowait(item)

    def statistics(self) -> MemoryObjectStreamStatistics:
        return self._send.statistics()

    def next_take(self) -> anyio.Event:
        return self._taken.next()

    def close(self) -> None:
        """The pipeline closes the real stream when the producer returns."""

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> _JournalingSend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


def with_pending(
    pending: list[Candidate],
    producer: Producer,
    skip: set[tuple[str, int]],
    gen_journal: Journal | None,
    taken: TakeSignal,
) -> Producer:
    """Feed journaled-but-unjudged completions first, then the producer's
    items minus those already done, journaling new generations on arrival;
    ``taken`` must be the signal given to `run_stages`."""

    async def produce(send: MemoryObjectSendStream[WorkItem]) -> None:
        for cand in pending:
            await send.send(WorkItem(candidate=cand))
        await producer(
            cast(MemoryObjectSendStream[WorkItem], _JournalingSend(send, skip, gen_journal, taken))
        )

    return produce
