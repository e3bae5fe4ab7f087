"""A handle on the candidate's coroutine (`handles.Handle`), as ``asyncio``
and ``await`` in the test see it.

The coroutine runs to its end in the candidate's process, on an event loop
of its own there (``await`` op), and its value or exception comes back as
any call's does. To the test's event loop the handle looks like a
coroutine that finishes at its first step: ``asyncio.run(candidate(x))``,
``await candidate(x)`` in the test's own coroutine and ``asyncio.gather``
of several give the value. A coroutine that waits on the test's own event
loop (a future or a queue the test made) does not cross.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Generator
from typing import Any


class Coroutine:
    """What ``type(h)`` answers for ``isinstance`` of a coroutine handle:
    registered as a `collections.abc.Coroutine`, so ``asyncio`` accepts it."""


collections.abc.Coroutine.register(Coroutine)
METHODS = frozenset({"send", "throw", "close"})


def _result(handle: Any) -> Generator[Any, None, Any]:
    return handle._ask("await")
    yield  # a generator that returns at its first step


def method(handle: Any, name: str) -> Callable[..., Any]:
    """The coroutine protocol's ``send``, ``throw`` and ``close``, for the
    test's event loop to drive: ``send`` runs it to its end in the child."""
    if name == "send":

        def send(value: Any = None) -> Any:
            raise StopIteration(handle._ask("await"))

        return send
    if name == "throw":

        def throw(exc: Any, *more: Any) -> Any:
            raise exc if isinstance(exc, BaseException) else exc(*more[:1])

        return throw
    return lambda: None


def install(cls: Any, flag: int) -> None:
    """Give ``cls`` (`handles.Handle`) ``__await__``, for its handles
    whose flags have ``flag`` (the child's coroutines)."""

    def __await__(self: Any) -> Generator[Any, None, Any]:
        if not self._flags & flag:
            raise TypeError(f"object {self._name} can't be used in 'await' expression")
        return _result(self)

    cls.__await__ = __await__
