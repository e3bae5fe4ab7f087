"""An evaluation as an async iterator: `open_run` and its `RunHandle`.

`evaluate` runs in a task group bound to an ``async with`` block, and its
results (or every event) come out of a bounded stream the caller iterates,
so a caller that reads slowly slows the run (backpressure). Its own module
because it is a second face over `evaluate`, for callers that consume
results as they finish.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from aioeval.events import Event, EventHook, GenerationUpdate, ResultReady, RunFinished, RunStarted
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.run.group_errors import engine_error
from aioeval.types import CandidateResult, Summary


class RunHandle:
    """An evaluation in progress: iterate results as they finish (or, opened
    with ``events=True``, every event), then read ``summary``."""

    def __init__(self, recv: MemoryObjectReceiveStream[Any]) -> None:
        self._recv = recv
        self.summary: Summary | None = None

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._recv.__aiter__()


@asynccontextmanager
async def open_run(
    spec: RunSpec, *, on_event: EventHook | None = None, events: bool = False
) -> AsyncIterator[RunHandle]:
    """``async with open_run(spec) as run: async for result in run: ...``

    With ``events=True`` the loop sees every `Event` instead, in order:
    `RunStarted`, `GenerationUpdate` snapshots (one may be skipped while the
    caller is behind: each supersedes the last), a `ResultReady` per result
    and, last, `RunFinished` with the summary. Results wait for the caller
    (backpressure), whichever is iterated. The evaluation runs in a task
    group bound to the ``async with`` block: leaving it normally lets the
    run finish (what was not read is still journaled) and sets ``summary``;
    leaving it by an exception or cancellation cancels the run (and kills
    its sandboxes).
    """
    send, recv = anyio.create_memory_object_stream[Any](64)
    handle = RunHandle(recv)

    async def on_result(result: CandidateResult) -> None:
        try:
            await send.send(ResultReady(result=result) if events else result)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    def watch(event: Event) -> None:
        if on_event is not None:
            on_event(event)
        if isinstance(event, RunStarted | GenerationUpdate):
            with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                send.send_nowait(event)

    async def runner() -> None:
        async with send:
            summary = await evaluate(
                spec, on_event=watch if events else on_event, on_result=on_result
            )
            handle.summary = summary
            if events:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await send.send(RunFinished(summary=summary))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(runner)
            try:
                yield handle
            except BaseException:
                tg.cancel_scope.cancel()
                raise
            else:
                async for _ in recv:  # what the caller left unread: the run still finishes
                    pass
            finally:
                recv.close()
    except BaseExceptionGroup as group:
        raise engine_error(group) from None
