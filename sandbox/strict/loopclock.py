"""The test's event loop while the candidate's coroutine runs in its own
process: blocked. In one program the loop would have run what fell due in
that time between the coroutine's steps (a timeout of ``wait_for`` or
``asyncio.timeout``, the test's own timed tasks), so a slow coroutine
would be cancelled there and finish here. Such a run fails the check with
its reason whatever the test does after."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from .outcomes import told

T = TypeVar("T")


def run(step: Callable[[], T]) -> T:
    """``step()`` (a blocking run in the child); told if a timer of the
    test's running loop fell due while it ran."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return step()
    start = loop.time()
    try:
        return step()
    finally:
        if _fell_due(loop, start, loop.time()):
            told(
                "strict scoring: a timer of the test's event loop fell due while the "
                "candidate's coroutine ran in its own process (a timeout one loop would "
                "have fired between its steps)"
            )


def _fell_due(loop: Any, start: float, now: float) -> bool:
    timers = getattr(loop, "_scheduled", None)
    if type(timers) is not list:
        return False
    return any(not h.cancelled() and start < h.when() <= now for h in timers)
