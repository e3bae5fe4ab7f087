"""Executors that run nothing, for exercising the pipeline around them.

`ScriptedExecutor` answers every task with an outcome a function picks;
`GatedExecutor` holds every task until the test opens its gate (to observe
backpressure). Both satisfy the `Executor` protocol in full.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from aioeval.executors.base import ExecutorFacts
from aioeval.sandbox.protocol import Outcome, Task


class ScriptedExecutor:
    """Answers each task with ``answer(task)`` (default: passed)."""

    def __init__(self, answer: Callable[[Task], Outcome] | None = None, *, size: int = 1) -> None:
        self.answer = answer or (lambda _task: Outcome(id=0, status="passed", wall_ms=1.0))
        self._size = size
        self.executed = 0
        self.started = False
        self.closed = False

    @property
    def size(self) -> int:
        return self._size

    @property
    def layers(self) -> list[str]:
        return []

    @property
    def missing(self) -> list[str]:
        return []

    @property
    def warnings(self) -> list[str]:
        return []

    def facts(self) -> ExecutorFacts:
        return ExecutorFacts(executor="scripted")

    async def start(self) -> None:
        self.started = True

    async def execute(self, task: Task) -> Outcome:
        self.executed += 1
        return self.answer(task)

    async def aclose(self) -> None:
        self.closed = True


class GatedExecutor(ScriptedExecutor):
    """Holds every task until `gate` is set; ``waiting`` counts them."""

    def __init__(self, answer: Callable[[Task], Outcome] | None = None, *, size: int = 1) -> None:
        super().__init__(answer, size=size)
        self.gate = anyio.Event()
        self.waiting = 0

    async def execute(self, task: Task) -> Outcome:
        self.waiting += 1
        await self.gate.wait()
        return await super().execute(task)
