"""The executor protocol: everything the run needs from where candidates run.

An executor runs `Task`s (see ``aioeval.sandbox.protocol``) in isolation
and says what isolation it could provide. `LocalPool` runs sandbox slots on
this machine; the Ray executor runs `LocalPool`s on a cluster. A new one is
one module with a ``from_config`` function, registered by name in
``aioeval.executors``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import msgspec

from aioeval.sandbox.protocol import Outcome, Task


class ExecutorFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What summary.json reports about where the run executed."""

    executor: str = "local"
    actors: int = 0
    """Ray sandbox actors started (replacements included); 0 for local."""
    nodes: int = 1
    """Machines that executed candidates."""
    infra_retries: int = 0
    """Executions sent again after an engine fault (dead template, lost actor)."""
    verifier_layers: list[str] = []
    """Isolation layers in force for the tests (strict scoring's verifiers;
    empty when none ran)."""
    verifier_missing: list[str] = []
    """Layers the isolation mode asked for that the verifiers lack."""


@runtime_checkable
class Executor(Protocol):
    """Runs candidate tasks in isolation; never raises for candidate behaviour."""

    @property
    def size(self) -> int:
        """Tasks it runs at once (the pipeline keeps that many in flight)."""
        ...

    @property
    def layers(self) -> list[str]:
        """Isolation layers actually in force (summary.json ``isolation``)."""
        ...

    @property
    def missing(self) -> list[str]:
        """Layers asked for that the machine could not provide."""
        ...

    @property
    def warnings(self) -> list[str]:
        """One line per missing layer, saying why (shown when a run starts)."""
        ...

    def facts(self) -> ExecutorFacts: ...

    async def start(self) -> None:
        """Start the sandboxes; a `SandboxError` with one line if it cannot."""
        ...

    async def execute(self, task: Task) -> Outcome: ...

    async def aclose(self) -> None: ...


SandboxPool = Executor
"""The name this protocol had before executors were a package (public API)."""
