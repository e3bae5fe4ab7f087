"""The generation window: samples asked for, answered, or waiting in the
pipeline's stream never exceed its size, which is at least max_concurrency;
a full window wakes when a judge takes an item, without polling."""

from __future__ import annotations

import anyio
import pytest
from anyio.streams.memory import MemoryObjectSendStream, MemoryObjectStreamStatistics

from aioeval.generation._window import Window
from aioeval.run.contract import ObservedSend, WorkItem
from aioeval.run.stages import TakeSignal
from aioeval.types import Candidate


def item(i: int) -> WorkItem:
    return WorkItem(candidate=Candidate(problem_id="P", sample_index=i, raw="", text=""))


class Observed:
    """A send stream whose receives are signalled, as the pipeline's is."""

    def __init__(self, send: MemoryObjectSendStream[WorkItem], taken: TakeSignal) -> None:
        self.inner = send
        self.taken = taken

    async def send(self, item: WorkItem) -> None:
        await self.inner.send(item)

    def statistics(self) -> MemoryObjectStreamStatistics:
        return self.inner.statistics()

    def next_take(self) -> anyio.Event:
        return self.taken.next()


def test_size_is_the_buffer_or_max_concurrency_when_larger() -> None:
    send, recv = anyio.create_memory_object_stream[WorkItem](4)
    with send, recv:
        assert Window(send, buffer=64, concurrency=2).size == 4  # the stream says
        assert Window(send, buffer=64, concurrency=12).size == 12
    unbuffered, recv0 = anyio.create_memory_object_stream[WorkItem](0)
    with unbuffered, recv0:
        assert Window(unbuffered, buffer=64, concurrency=16).size == 64


@pytest.mark.anyio
async def test_a_full_window_counts_the_stream_and_wakes_on_a_take() -> None:
    send, recv = anyio.create_memory_object_stream[WorkItem](2)
    taken = TakeSignal()
    observed = Observed(send, taken)
    assert isinstance(observed, ObservedSend)
    window = Window(observed, buffer=2, concurrency=1)  # type: ignore[arg-type]
    reserved = anyio.Event()

    async def third() -> None:
        await window.reserve(1)
        reserved.set()

    with send, recv:
        await window.reserve(2)
        await window.hand_on(item(0))
        await window.hand_on(item(1))
        assert window.held == 0 and window.used() == 2  # both wait in the stream
        async with anyio.create_task_group() as tg:
            tg.start_soon(third)
            await anyio.wait_all_tasks_blocked()
            assert not reserved.is_set()  # the stream's two count: the window is full
            await recv.receive()
            taken.notify()
            with anyio.fail_after(10):
                await reserved.wait()
        assert window.used() == 2  # one in the stream, one place held


@pytest.mark.anyio
async def test_with_a_plain_stream_the_window_counts_what_it_holds() -> None:
    send, recv = anyio.create_memory_object_stream[WorkItem](0)
    window = Window(send, buffer=1, concurrency=1)
    done = anyio.Event()

    async def second() -> None:
        await window.reserve(1)
        done.set()

    with send, recv:
        await window.reserve(1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            tg.start_soon(window.hand_on, item(0))  # blocks until received
            await anyio.wait_all_tasks_blocked()
            assert not done.is_set()
            assert (await recv.receive()).candidate.sample_index == 0
            with anyio.fail_after(10):
                await done.wait()
