"""The test's code called from one of the candidate's own threads runs on a
thread of the verifier's standing for it.

In one program a callback that a candidate's worker thread calls (a thread
pool mapping the test's function, a timer, a daemon) runs on that thread:
``threading.current_thread()`` is the worker, not the main thread, and a
``threading.local`` or the decimal context it reads is that thread's. The
channel still carries one request at a time, so the lane's work is done
while the thread that served the request waits for it: nothing runs side
by side that did not before, only on the thread one program would use.

The child names the asking thread (a number and a name) when it is not the
thread that serves the test's requests. At most `MAX_LANES` are kept: the
one used longest ago is let go for a new one, never the serving thread in
its place (a test that checks the thread its callback runs on is never
answered from the main thread for a worker). While a lane's call is out,
the candidate's process may end (the wall-clock backstop, when the call
waits on something only the candidate's other threads would do, which here
wait for the channel): the check fails with `GONE`, which names that.
"""

from __future__ import annotations

import _thread
import select
import threading
import time
from collections.abc import Callable
from typing import Any

from .outcomes import CandidateError, CandidateGone, told

MAX_LANES = 16
MAX_NAME = 200
GONE = (
    "strict scoring: the test's code, called from a thread of the candidate's, was still"
    " running when the candidate's process ended (its other threads wait for the one"
    " channel; in one program they run side by side)"
)

NO_LANE = (
    "strict scoring: more of the candidate's threads called the test's code at once"
    f" than the {MAX_LANES} threads the verifier keeps to stand for them"
)

NO_THREAD = (
    "strict scoring: the verifier could not start a thread to stand for one of the"
    " candidate's threads that called the test's code (its tasks or memory are used up)"
)

_ident = _thread.get_ident
_lock = _thread.allocate_lock
_Thread = threading.Thread
_monotonic = time.monotonic
_poll = select.poll
_HUNG_UP = select.POLLHUP | select.POLLERR | select.POLLRDHUP
_WAKE_S = 0.05
"""How often a thread waiting on a lane looks whether the child is gone."""


class Turn:
    """The verifier's one-request-at-a-time turn: a reentrant lock whose
    holder lends it to the lane doing its work (the lane asks the child on
    the holder's behalf, as one thread of one program would)."""

    def __init__(self) -> None:
        self.owner: int | None = None
        self.count = 0
        self.lent: dict[int, int] = {}
        """A lane's thread id -> the id it works for while a call is out."""
        self._guard = _lock()

    def me(self) -> int:
        ident = _ident()
        return self.lent.get(ident, ident)

    def acquire(self, blocking: bool = False) -> bool:
        """Take the turn if it is free or already this thread's (never waits)."""
        me = self.me()
        with self._guard:
            if self.owner is None or self.owner == me:
                self.owner = me
                self.count += 1
                return True
            return False

    def release(self) -> None:
        with self._guard:
            self.count -= 1
            if not self.count:
                self.owner = None


class _Lane:
    """One thread of the verifier's, standing for one of the candidate's."""

    def __init__(self, name: str) -> None:
        self.jobs: list[Callable[[], None] | None] = []
        self.busy = False
        self.ready = _lock()
        self.ready.acquire()
        self.thread = _Thread(target=self._loop, name=name, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            self.ready.acquire()
            job = self.jobs.pop()
            if job is None:
                return  # let go of (`Lanes._let_go`)
            job()

    def end(self) -> None:
        self.jobs.append(None)
        self.ready.release()


class Lanes:
    """The lanes of one check, by the child's number for each thread."""

    def __init__(self, turn: Turn, chan: Any) -> None:
        self.turn = turn
        self.chan = chan
        """The channel to the child (its ``fd`` and ``deadline``)."""
        self.lanes: dict[int, _Lane] = {}

    def run(self, thread: object, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)`` on the lane for the child's ``thread`` (None: the
        serving thread, here), its value or exception as if run here."""
        lane = self._lane(thread)
        if lane is None or lane.thread.ident == _ident():
            return call(*args)
        box: list[tuple[bool, Any]] = []
        done = _lock()
        done.acquire()
        lender = self.turn.me()

        def job() -> None:
            self.turn.lent[_ident()] = lender
            try:
                box.append((True, call(*args)))
            except BaseException as exc:  # handed back to the waiting thread
                box.append((False, exc))
            finally:
                self.turn.lent.pop(_ident(), None)
                done.release()

        lane.jobs.append(job)
        lane.busy = True  # set and cleared here: the lane may not run again before we do
        lane.ready.release()
        try:
            self._wait(done)
        finally:
            lane.busy = False
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def _lane(self, thread: object) -> _Lane | None:
        if thread is None:
            return None
        if not (
            type(thread) is list
            and len(thread) == 2
            and type(thread[0]) is int
            and type(thread[1]) is str
        ):
            raise CandidateError(told("the candidate's process sent a malformed message"))
        key, name = thread[0], thread[1][:MAX_NAME]
        lane = self.lanes.pop(key, None)
        if lane is None:
            if len(self.lanes) >= MAX_LANES:
                self._let_go()
            try:
                lane = _Lane(name)
            except (RuntimeError, MemoryError):  # the check's tasks or memory are used up
                raise CandidateError(told(NO_THREAD)) from None
        elif lane.thread.name != name:
            lane.thread.name = name  # renamed since, as one program's thread would be
        self.lanes[key] = lane  # the most recently used last
        return lane

    def _let_go(self) -> None:
        """End the lane used longest ago that is not running the test's
        code: its thread may have ended (the child's numbers are reused);
        one still alive gets a fresh lane when it calls again."""
        for key, lane in self.lanes.items():
            if not lane.busy:
                del self.lanes[key]
                lane.end()
                return
        raise CandidateError(told(NO_LANE))

    def _wait(self, done: Any) -> None:
        """Until the lane's call is done; the child ending meanwhile (or
        the channel's deadline passing) fails the check with `GONE`."""
        watch: Any = None
        while not done.acquire(True, _WAKE_S):
            if watch is None:  # only once a call outlasts one wake: most end before
                watch = _poll()
                watch.register(self.chan.fd, _HUNG_UP)
            if watch.poll(0) or _monotonic() > self.chan.deadline:
                told(GONE)
                raise CandidateGone("the candidate's process ended before the check completed")
