"""The test's coroutine as the candidate's event loop runs it.

A coroutine of the test's that reaches the candidate's code (an ``async
def`` callback of the test's, called there) is a real coroutine here, so
``asyncio.create_task``, ``gather``, ``wait_for``, ``asyncio.run`` and
``await`` take it as in one program. Each of its steps is a ``step``
request to the verifier (`strict.teststeps`), which runs the test's own
coroutine one step: a bare yield is a bare yield here too, and a wait on
the test's future is a wait on this loop for as long as the verifier's
loop has until its next timer (or, with no timer, until another step of
the test's coroutines may have settled it). What this loop throws in (a
cancellation, a timeout's) is thrown into the test's coroutine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

_sleep = asyncio.sleep
_get_running_loop = asyncio.get_running_loop
_CancelledError = asyncio.CancelledError
_type = type
_len = len
_BaseException = BaseException

_parked: list[asyncio.Future[Any]] = []
"""Driven coroutines waiting on a future of the test's with no timer:
woken after each step of any of them, which may have settled it."""


def driven(ask: Callable[[str, list[Any]], Any]) -> Coroutine[Any, Any, Any]:
    """A coroutine whose steps are ``ask("step", ...)``'s (see module doc)."""
    return _drive(ask)


async def _drive(ask: Callable[[str, list[Any]], Any]) -> Any:
    how: list[Any] = ["send"]
    while True:
        try:
            got = ask("step", how)
        finally:
            _wake()
        if _type(got) is not list or not got:
            raise RuntimeError("the verifier sent a malformed step")
        if got[0] == "done" and _len(got) == 2:
            return got[1]
        if got[0] == "cancelled":
            raise _CancelledError()
        try:
            await _pause(got)
            how = ["send"]
        except _CancelledError:
            how = ["cancel"]
        except GeneratorExit:
            ask("step", ["close"])
            raise
        except _BaseException as exc:
            how = ["throw", exc]


async def _pause(got: list[Any]) -> None:
    """Wait on this loop as the verifier's step said."""
    if got[0] == "yield":
        await _sleep(0)
        return
    delay = got[1] if got[0] == "wait" and _len(got) == 2 else 0
    if _type(delay) is float or _type(delay) is int:
        await _sleep(delay)
        return
    parked = _get_running_loop().create_future()
    _parked.append(parked)
    await parked


def _wake() -> None:
    woken = list(_parked)
    _parked.clear()
    for f in woken:
        if not f.done():
            f.set_result(None)
