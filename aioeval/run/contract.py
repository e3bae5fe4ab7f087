"""The stage contract: what flows from a producer to the judge.

A leaf module (types and anyio only), so producers below the run layer
(generation) can speak it without importing the run itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, runtime_checkable

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectSendStream, MemoryObjectStreamStatistics

from aioeval.types import Candidate, Problem, Prompt, Taken, Verdict


class WorkItem(msgspec.Struct, frozen=True, kw_only=True):
    """A candidate on its way to the sandbox; ``verdict`` is set when it was
    already decided upstream (e.g. generation gave up: infra_error)."""

    candidate: Candidate
    verdict: Verdict | None = None


Producer = Callable[[MemoryObjectSendStream[WorkItem]], Awaitable[None]]
"""Sends work into the bounded stream (its backpressure) and returns when done."""


@runtime_checkable
class ObservedSend(Protocol):
    """What the pipeline's work stream offers a producer besides sending:
    its fill level, and an event each time an item leaves it (receives on an
    anyio memory stream cannot be observed from the send side), so a
    producer that bounds what waits in the stream waits instead of polling."""

    def statistics(self) -> MemoryObjectStreamStatistics: ...

    def next_take(self) -> anyio.Event:
        """An event set when a consumer next takes an item off the stream."""
        ...


def iter_producer(items: Iterable[Candidate]) -> Producer:
    """A producer of candidates that already exist (reference answers, samples)."""

    async def produce(send: MemoryObjectSendStream[WorkItem]) -> None:
        for cand in items:
            await send.send(WorkItem(candidate=cand))

    return produce


def default_buffer(workers: int) -> int:
    """Completions allowed to wait for a sandbox slot: a few KB each, so 64
    costs well under a megabyte and keeps n-sample requests large."""
    return max(64, 4 * workers)


class PromptSource(Protocol):
    """What generation needs of a suite: the prompt for a problem, and the
    candidate in a raw completion (a suite satisfies it; generation never
    imports suites)."""

    def prompt(self, problem: Problem) -> Prompt: ...

    def take(self, problem: Problem, raw: str) -> Taken: ...
