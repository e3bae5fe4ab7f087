"""The candidate's threads calling the test's code at once.

The channel carries one request at a time, so the test's functions that
the candidate's threads call (a thread pool mapping the test's callback)
run one after another in the verifier, in the order the requests came. In
one program they overlap where they wait (sleep, read, block), and finish
in another order: an answer that returns results in the order they finish
is right here and wrong there. Where both happened in a check (the child
saw a thread wait its turn, and a call of the test's waited), the check
fails with `REASON`; calls that only compute (a pure callback) finish in
the order they start in one program too, and are judged as usual.

The other way, the test's own threads calling the candidate's code take
turns too, so a race inside the candidate's code between them (an unlocked
read-modify-write that loses updates) never shows, and a thread that waits
for another's call (a lock the test holds through the candidate's object)
waits for ever. A request of the test's made while another of its threads
has one out fails the check at once with `TEST_REASON`, whatever the test
does after (`overlap`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NoReturn

from .outcomes import Refused

WAITED = 0.01
"""Seconds a call of the test's may spend off the CPU (its wall time less
its CPU time) before it counts as waiting."""
REASON = (
    "strict scoring: the candidate's threads called the test's code side by side "
    "while a call of the test's waited, which the candidate's process sends one at "
    "a time (in one program they overlap, and the order they finish in differs)"
)

TEST_REASON = (
    "strict scoring: the test's threads called the candidate's code side by side, "
    "which the candidate's process answers one at a time (in one program the calls "
    "overlap, and a race between them shows)"
)

overlapped = False
"""Whether a request of the test's was refused beside another's: the
other may wait for ever on the child (a lock the test holds through the
candidate's object), so the child is stopped once the check has decided.
A check's process is fresh, so this is one check's."""

_clock = time.perf_counter  # the real clocks, whatever the test patches
_cpu = time.thread_time


class Threads:
    """In the verifier: whether the two conditions above were seen."""

    def __init__(self, refuse: Callable[[str], object]) -> None:
        self.refuse = refuse
        self.contended = False
        self.waited = False

    def timed(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)`` (a call of the test's function), timed; no frame
        between, as calls that nest deep spend the verifier's recursion limit."""
        wall, cpu = _clock(), _cpu()
        try:
            return call(*args)
        finally:
            off = (_clock() - wall) - (_cpu() - cpu)
            if off > WAITED and not self.waited:
                self.waited = True
                self._check()

    def contend(self) -> None:
        """The child saw one of its threads wait for another's request."""
        self.contended = True
        self._check()

    def overlap(self) -> NoReturn:
        """One of the test's threads asked while another's request was out:
        the check fails, and this request is refused rather than queued
        (it could wait for ever on what the other's holds)."""
        global overlapped
        overlapped = True
        raise Refused(TEST_REASON)  # kept, as every refusal is (`Refused.told`)

    def _check(self) -> None:
        if self.contended and self.waited:
            self.refuse(REASON)
