"""The verifier's two clocks: the test's CPU budget (``ITIMER_PROF``),
armed from the first word the candidate's process sends until the verdict,
so that serving the child's requests while its names are read counts as
well as the test itself (with an allowance for those requests, see `arm`);
and the wall-clock limit a test may set on one call of the candidate
(`within`, ``ITIMER_REAL``)."""

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


_budget_s = 0.0
"""CPU seconds the timer has been armed for over this check."""
_allowed: Callable[[], float] | None = None
"""The check's CPU budget with its allowance so far, in seconds (`arm`)."""


def _on_prof(signum: int, frame: object) -> None:
    global _budget_s
    if not _armed:
        return
    more = 0.0 if _allowed is None else _allowed() - _budget_s
    if more > 0.001:  # the crossings since earned the rest
        _budget_s += more
        signal.setitimer(signal.ITIMER_PROF, more)
        return
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


def arm(cpu_s: float, allowed: Callable[[], float] | None = None) -> None:
    """Run the test's CPU budget of ``cpu_s``; when it runs out, ``allowed()``
    (the budget with what the verifier has since spent serving the child,
    `protocol.served`) may extend it before the check times out."""
    global _armed, _budget_s, _allowed
    _armed, _budget_s, _allowed = True, cpu_s, allowed
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
