"""The test's coroutines, driven step by step by the candidate's event loop.

A coroutine of the test's that the candidate's code gets (an ``async def``
callback of the test's called there: ``asyncio.create_task(f())``,
``asyncio.gather``, ``await loader(key)``) is a coroutine in the child
(`process.stepped`) whose every step is a ``step`` request here: it sends
into the test's coroutine (or throws what the child's loop threw, a
cancellation included) and says how the step ended: done with a value,
cancelled, a bare yield, or waiting on a future of the test's. So the
candidate's loop interleaves the test's coroutines with its own tasks as
one loop would in one program.

The futures the test's coroutines wait on (``asyncio.sleep``, an event,
a task of their own) belong to one loop of the verifier's, kept for the
check and run only inside a step, with the test's loop (if any) set aside
meanwhile: a step first runs that loop's ready callbacks and due timers,
and a coroutine still waiting tells the child how long until the loop's
next timer, for the child's loop to wait that long before its next step.
"""

from __future__ import annotations

import asyncio
import types
from asyncio import events
from typing import Any

_loop: asyncio.AbstractEventLoop | None = None
"""The loop the test's driven coroutines wait on (a check's process is
fresh, so it is one check's)."""
_waiting: dict[int, asyncio.Future[Any]] = {}
"""The future each driven coroutine (by identity) waits on."""
_SETTLE = 10_000
"""Rounds of ready callbacks a step runs at most."""


def step(coro: Any, args: object) -> list[Any]:
    """One step of the test's coroutine ``coro``: ``args`` is ``["send"]``,
    ``["throw", exception]``, ``["cancel"]`` or ``["close"]``; the answer
    is ``["done", value]``, ``["cancelled"]``, ``["yield"]`` or
    ``["wait", seconds or None]``. What the coroutine raises is raised."""
    if type(coro) is not types.CoroutineType or type(args) is not list or not args:
        raise TypeError("malformed step")
    loop = _own_loop()
    running = events._get_running_loop()
    events._set_running_loop(loop)
    try:
        return _step(loop, coro, args)
    finally:
        events._set_running_loop(running)


def _step(loop: asyncio.AbstractEventLoop, coro: Any, args: list[Any]) -> list[Any]:
    how = args[0]
    if how == "close":
        _waiting.pop(id(coro), None)
        coro.close()
        return ["done", None]
    waited = _waiting.pop(id(coro), None)
    _settle(loop)
    if how == "send" and waited is not None and not waited.done():
        _waiting[id(coro)] = waited
        return ["wait", _delay(loop)]
    if how != "send" and waited is not None:
        waited.cancel()
    try:
        if how == "send":
            got = coro.send(None)
        elif how == "cancel":
            got = coro.throw(asyncio.CancelledError())
        elif how == "throw" and len(args) == 2 and isinstance(args[1], BaseException):
            got = coro.throw(args[1])
        else:
            raise TypeError("malformed step")
    except StopIteration as stop:
        return ["done", stop.value]
    except asyncio.CancelledError:
        return ["cancelled"]
    if got is None:
        return ["yield"]
    if not getattr(got, "_asyncio_future_blocking", False):
        raise RuntimeError(f"the test's coroutine yielded {type(got).__name__}, not a future")
    got._asyncio_future_blocking = False
    if got.get_loop() is not loop:
        raise RuntimeError("the test's coroutine waits on a future of another event loop")
    _waiting[id(coro)] = got
    _settle(loop)
    return ["wait", 0.0 if got.done() else _delay(loop)]


def _own_loop() -> asyncio.AbstractEventLoop:
    global _loop
    if _loop is None:  # the selector loop whatever the test's policy: `_settle` runs it
        _loop = asyncio.SelectorEventLoop()
    return _loop


def _settle(loop: Any) -> None:
    """Run ``loop``'s ready callbacks and due timers, without waiting: a
    no-op made ready first keeps its select from blocking (with only a
    cancelled timer left it would wait for ever)."""
    for _ in range(_SETTLE):
        delay = _delay(loop)
        if delay is None or delay > 0:
            return
        loop.call_soon(_noop)
        loop._run_once()


def _noop() -> None:
    pass


def _delay(loop: Any) -> float | None:
    """Seconds until ``loop``'s next live timer (0 with callbacks ready);
    None if it has none (what the coroutine waits on is another's to
    settle)."""
    if loop._ready:
        return 0.0
    live = [h.when() for h in loop._scheduled if not h.cancelled()]
    if not live:
        return None
    return max(0.0, float(min(live) - loop.time()))
