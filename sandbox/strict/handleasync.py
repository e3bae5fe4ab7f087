"""A handle on the candidate's coroutine (`handles.Handle`), as ``asyncio``
and ``await`` in the test see it.

The coroutine runs to its end in the candidate's process, on an event loop
of its own there (``await`` op), and its value or exception comes back as
any call's does. To the test's event loop the handle looks like a
coroutine that finishes at its first step: ``asyncio.run(candidate(x))``,
``await candidate(x)`` in the test's own coroutine and ``asyncio.gather``
of several give the value. A coroutine that waits on the test's own event
loop (a future or a queue the test made) does not cross.

Each first yields once to the test's loop, so that the candidate's
coroutines the test runs side by side (``asyncio.gather``) are all seen
waiting before any runs, and then run side by side in the child, on one
loop there, as one loop would interleave them in one program (a lost
update between them shows; runs to the end one after another would hide
it).
"""

from __future__ import annotations

import asyncio
import collections.abc
from collections.abc import Callable, Generator
from typing import Any

from . import loopclock
from .outcomes import CandidateError, told


class Coroutine:
    """What ``type(h)`` answers for ``isinstance`` of a coroutine handle:
    registered as a `collections.abc.Coroutine`, so ``asyncio`` accepts it."""


collections.abc.Coroutine.register(Coroutine)
METHODS = frozenset({"send", "throw", "close"})


_waiting: dict[int, dict[int, Any]] = {}
"""The candidate's coroutines each of the test's loops holds between their
first step and their run (by the loop's identity, then the handle's)."""
_done: dict[int, list[Any]] = {}
"""Outcomes (``[True, value]`` or ``[False, exception]``) of coroutines run
beside another whose step ran them all, for their own next step."""
_steps: dict[int, Generator[Any, None, Any]] = {}
"""The steps of each coroutine the test's loop drives by ``send``."""


def _first(handle: Any) -> None:
    """The first step: wait (once) beside the others the loop holds."""
    loop = _loop()
    if loop is not None:
        _waiting.setdefault(loop, {})[id(handle)] = handle


def _run(handle: Any) -> Any:
    """The next step: run it to its end, with the others waiting beside it
    on the same loop (the ``gather`` op: side by side on one loop of the
    child's, started in the order the test's loop started them)."""
    if id(handle) in _done:
        return _outcome(_done.pop(id(handle)))
    waiting = _waiting.get(_loop() or 0, {})
    waiting.pop(id(handle), None)
    others = list(waiting.values())
    waiting.clear()
    if not others:
        return handle._ask("await")
    try:
        outcomes = handle._ask("gather", others)
    except BaseException as exc:
        for other in others:
            _done[id(other)] = [False, exc]
        raise
    if type(outcomes) is not list or len(outcomes) != len(others) + 1:
        raise CandidateError(told("the candidate's process sent a malformed message"))
    for other, outcome in zip(others, outcomes[1:], strict=True):
        _done[id(other)] = outcome
    return _outcome(outcomes[0])


def _outcome(outcome: Any) -> Any:
    if type(outcome) is not list or len(outcome) != 2 or type(outcome[0]) is not bool:
        raise CandidateError(told("the candidate's process sent a malformed message"))
    if outcome[0]:
        return outcome[1]
    if not isinstance(outcome[1], BaseException):
        raise CandidateError(told("the candidate's process sent a malformed message"))
    raise outcome[1]


def _loop() -> int | None:
    try:
        return id(asyncio.get_running_loop())
    except RuntimeError:
        return None


def _result(handle: Any) -> Generator[Any, None, Any]:
    _first(handle)
    yield None  # a bare yield: the loop runs its other ready tasks first
    return loopclock.run(lambda: _run(handle))


def method(handle: Any, name: str) -> Callable[..., Any]:
    """The coroutine protocol's ``send``, ``throw`` and ``close``, for the
    test's event loop to drive: ``send`` runs it to its end in the child."""
    if name == "send":

        def send(value: Any = None) -> Any:
            steps = _steps.setdefault(id(handle), _result(handle))
            try:
                return steps.send(value)
            except BaseException:
                del _steps[id(handle)]
                raise

        return send
    if name == "throw":

        def throw(exc: Any, *more: Any) -> Any:
            _steps.pop(id(handle), None)
            for waiting in _waiting.values():
                waiting.pop(id(handle), None)
            raise exc if isinstance(exc, BaseException) else exc(*more[:1])

        return throw
    return lambda: None


def install(cls: Any, flag: int) -> None:
    """Give ``cls`` (`handles.CoroutineHandle`) ``__await__``, for its handles
    whose flags have ``flag`` (the child's coroutines)."""

    def __await__(self: Any) -> Generator[Any, None, Any]:
        if not self._flags & flag:
            raise TypeError(f"object {self._name} can't be used in 'await' expression")
        return _result(self)

    cls.__await__ = __await__
