"""SIGTERM and Ctrl-C (SIGINT) end a run the same way: by cancelling it.

A process manager (systemd, Kubernetes, a CI timeout, ``kill``) stops a job
with SIGTERM. Python's default is to die on the spot, which skips the
journal's final fsync and leaves the sandbox pool's processes to be reaped
by whoever inherits them. Turning the signal into a cancellation of the run
lets the run's own cleanup happen (journal closed, pool killed and waited
for), after which the CLI says how to resume and exits 143 (128 + SIGTERM).
SIGINT takes the same path and ends as `KeyboardInterrupt` (exit 130):
left to the event loop's own handler, its cancellation of the main task
can land inside a cancel scope that absorbs it, and the run goes on.

A second signal during that cleanup gets the default action again, so a
supervisor (or a user) that insists still wins.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")

EXIT_STATUS = 128 + signal.SIGTERM


class Terminated(Exception):
    """The run was cancelled by SIGTERM and has cleaned up."""


async def until_sigterm(fn: Callable[[], Awaitable[T]]) -> T:
    """``await fn()``, cancelled by SIGTERM (then `Terminated` is raised)
    or SIGINT (then `KeyboardInterrupt`).

    A run that finished before the cancellation took hold keeps its result:
    its work is done and written.
    """
    done: list[T] = []
    caught: list[int] = []

    async def watch(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                caught.append(signum)
                scope.cancel()
                return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch, tg.cancel_scope)
            done.append(await fn())
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The watcher raises nothing: this is fn's own error, as fn raised it.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    if done:
        return done[0]
    assert caught
    if caught[0] == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated
