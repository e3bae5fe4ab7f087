"""A coroutine of one side awaited by the other's code, run to its end on
an event loop of its own while the caller's loop waits for the answer.

The caller's loop is inside one of its steps (the other side's request
arrived while it ran), so the running loop is set aside for the nested run
and put back after it: the coroutine sees a loop of its own, as a coroutine
awaited on a loop it does not share (a future or queue of the caller's
loop does not cross).
"""

from __future__ import annotations

import asyncio
import inspect
from asyncio import events
from typing import Any

_anext = anext
_all_tasks = asyncio.all_tasks
"""Bound at import: a check's test finds it named (`strict.measures`)."""


def alone() -> bool:
    """Is the running task (if any) the only unfinished one of its loop?
    Only then is running another coroutine to its end inside it what
    awaiting it would do: beside other tasks, one loop would interleave
    them (a queue filled in the order they finish, a load two of them
    share), which a run to the end serializes."""
    try:
        loop = events.get_running_loop()
    except RuntimeError:
        return True
    current = asyncio.current_task(loop)
    return all(t is current or t.done() for t in _all_tasks(loop))


def run_nested(coro: Any) -> Any:
    """Run ``coro`` (a coroutine, or any awaitable) to its end and give its
    value or raise its exception."""
    if not inspect.isawaitable(coro):
        raise TypeError(f"object {type(coro).__name__} can't be used in 'await' expression")
    running = events._get_running_loop()
    events._set_running_loop(None)
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(_awaited(coro))
    finally:
        loop.close()
        events._set_running_loop(running)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


async def next_step(iterator: Any) -> Any:
    """The next item of an async iterator: one step of the test's ``async
    for`` over it, awaited as a coroutine (its ``StopAsyncIteration`` ends
    the loop)."""
    return await _anext(iterator)


async def together(coros: list[Any]) -> list[list[Any]]:
    """Run ``coros`` side by side on the running loop, started in order as
    ``asyncio.gather`` starts them: each one's ``[True, value]`` or
    ``[False, exception]``."""
    return list(await asyncio.gather(*(_outcome(c) for c in coros)))


async def _outcome(coro: Any) -> list[Any]:
    try:
        return [True, await coro]
    except Exception as exc:
        return [False, exc]
