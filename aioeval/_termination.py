"""SIGTERM ends a run the way Ctrl-C does: by cancelling it.

A process manager (systemd, Kubernetes, a CI timeout, ``kill``) stops a job
with SIGTERM. Python's default is to die on the spot, which skips the
journal's final fsync and leaves the sandbox pool's processes to be reaped
by whoever inherits them. Turning the signal into a cancellation of the run
lets the run's own cleanup happen (journal closed, pool killed and waited
for), after which the CLI says how to resume and exits 143 (128 + SIGTERM).

A second SIGTERM during that cleanup gets the default action again, so a
supervisor that insists still wins.
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
    """``await fn()``, cancelled by SIGTERM (then `Terminated` is raised).

    A run that finished before the cancellation took hold keeps its result:
    its work is done and written.
    """
    done: list[T] = []
    terminated = anyio.Event()

    async def watch(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _ in signals:
                terminated.set()
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
    assert terminated.is_set()
    raise Terminated
