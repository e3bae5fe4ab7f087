"""The verifier's two clocks: the test's CPU budget (``ITIMER_PROF``),
armed from the first word the candidate's process sends until the verdict,
so that serving the child's requests while its names are read counts as
well as the test itself; and the wall-clock limit a test may set on one
call of the candidate (`within`, ``ITIMER_REAL``)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any


class CheckTimeout(BaseException):
    """The test's own CPU budget ran out in the verifier."""


class CallTimeLimit(BaseException):
    """A call of the candidate ran past the wall-clock limit the test set
    for it with `within` (a BaseException: the test's own handlers, and
    nothing the candidate raises, can stand for it)."""


_armed = False
"""True only while a check's budget runs, so a late timer signal is ignored."""


def _on_prof(signum: int, frame: object) -> None:
    if _armed:
        raise CheckTimeout


_call_limit = 0.0
"""The limit of the call `within` runs (0: none), for a late alarm to ignore."""


overran = False
"""A call ran past its limit in this check (the child may still be busy in
it, whatever the verdict: a test that goes on past failures catches it)."""


def _on_alarm(signum: int, frame: object) -> None:
    global overran
    if _call_limit:
        overran = True
        raise CallTimeLimit(f"a call of the candidate ran past its time limit of {_call_limit:g}s")


def install() -> None:
    signal.signal(signal.SIGPROF, _on_prof)
    signal.signal(signal.SIGALRM, _on_alarm)


def arm(cpu_s: float) -> None:
    global _armed
    _armed = True
    signal.setitimer(signal.ITIMER_PROF, cpu_s)


def disarm() -> None:
    """The verdict is in: no late CPU signal from here (call it before
    anything that may run long, such as describing the exception)."""
    global _armed
    _armed = False
    signal.setitimer(signal.ITIMER_PROF, 0)


WITHIN = "__aioeval_within__"
"""The name under which a test finds `within` (never the candidate's to bind)."""


def within(seconds: float, fn: Callable[..., Any], /, *args: Any) -> Any:
    """``fn(*args)``, ended as the answer's timeout once it has taken
    ``seconds`` of wall time: tests that give each input its own limit
    (EvalPlus, competitive programming) use it around each call, and the
    alarm interrupts the wait for the candidate's reply."""
    global _call_limit
    _call_limit = seconds
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    finally:
        _call_limit = 0.0
        signal.setitimer(signal.ITIMER_REAL, 0)
