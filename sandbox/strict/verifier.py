"""The verifier: a process per sandbox slot that runs the tests.

Started by the engine like a template (absolute interpreter, no site hooks,
an allowlisted environment), it never runs model code, and it runs the
problem's code (the prompt, the test, its setup) only in a confined child
of its own, one per check (see `checkfork`: the template's layers, a uid of
its own, nothing of the engine's to reach), so every check starts from the
same fresh state and a hostile test reaches nothing. For each `Check` the
child runs the prelude (a prompt) and the test's setup in fresh globals
with the real builtins, binds the entry point and every name the test uses
that the candidate's program defines to handles on the child's objects
(see `handles`), and runs the driver (``check(candidate)``). The test sees
what it would see in the single program, values rebuilt by trusted code and
handles whose ``==``, ``bool``, ``hash`` and ordering are never the
candidate's to answer, and nothing the candidate's process does (frames,
heap, builtins, trace hooks, fds, exit paths) can reach the code that
decides the verdict: a check passes only if the test, run here, returns.

Frames to the engine go out on a descriptor of their own; what the test
prints is captured (bounded) and reported with the verdict.

The channel arrives from the slot's template over a Unix socket as an
``SCM_RIGHTS`` descriptor tagged with the job id, one per job. The verifier is
not dumpable (no ptrace, no /proc/<pid>/mem), and ``random`` is reset to one
fixed state before every check, so randomised tests are reproducible.
"""

from __future__ import annotations

import builtins
import collections.abc
import ctypes
import gc
import importlib
import os
import random
import resource
import signal
import sys
import time
from collections.abc import Callable
from types import CodeType, FunctionType, ModuleType
from typing import Any

import msgspec

from .. import frames, protocol
from ..isolation import sharedwd
from ..process import checkfork
from ..protocol import served
from ..values import unshared, wire, world
from . import (
    answers,
    autospecs,
    handles,
    measures,
    members,
    session,
    sidebyside,
    testnames,
    testrandom,
    timers,
    weakheld,
)
from .channel import Channel
from .handleuse import handle_use
from .testcode import Capture, Compiled, TestBroken, guarded

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
TEST_MODULE = "__main__"
CandidateGone = handles.CandidateGone
CandidateExit = handles.CandidateExit
CandidateError = handles.CandidateError
CheckSetupError = handles.CheckSetupError
CheckTimeout, CallTimeLimit = timers.CheckTimeout, timers.CallTimeLimit
WITHIN, within = timers.WITHIN, timers.within


def _reason(exc: BaseException) -> str:
    name = type(exc).__name__
    try:  # str() can run the candidate's code (handles in args): a name will do
        text = str(exc)
    except BaseException:
        return name[:500]
    # A traceback the test formats into its message names the engine's own
    # files by where the package lives on this host: by package path instead.
    text = text.replace(_HOME, "aioeval/sandbox/")
    if isinstance(exc, SystemExit):  # the candidate's, as one program names it
        return (f"{name}: {text}" if text else name)[:500]
    if isinstance(exc, CandidateError | CandidateExit | CandidateGone | handles.Refused):
        return text[:500]
    return (f"{name}: {text}" if text else name)[:500]


_HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + "/"
"""Where the sandbox package lives (its files' paths in tracebacks)."""


def _failure(exc: BaseException, changed: list[str]) -> str:
    """The reason for a failed check: a refusal the test's own runner caught
    on the way (see `handles.Refused`) comes first; else, if the test
    changed state that stays in its own process (`unshared`), that is named
    before the exception."""
    reason = _reason(exc)
    told = _told()
    if told is not None and not isinstance(exc, handles.Refused):
        return f"{told} (then {reason})"[:500]
    theirs = unshared.candidate_file(exc) or unshared.removal()
    if theirs is not None:
        return f"{theirs} (then {reason})"[:500]
    first = handles.Refused.first or handle_use(exc, TEST_MODULE)
    if first is not None and not isinstance(exc, handles.Refused):
        return f"{first} (then {reason})"[:500]
    if changed and not isinstance(exc, handles.Refused):
        what = ", ".join(changed[:4])
        return (
            f"strict scoring: the test changed {what}, which the candidate's process "
            f"does not see (then {reason})"
        )[:500]
    return reason


class Verifier:
    """What a check needs: the process's ``random`` state at start, which
    every check is reset to. One is made in the verifier process before it
    forks; each check runs in a child of its own (see `checkfork`)."""

    def __init__(self, hello: protocol.VerifierHello) -> None:
        self.hello = hello
        testrandom.watch_random()
        random.seed(protocol.RANDOM_SEED)
        self.random_state = random.getstate()
        self.setup_random: Any = None
        """The state the test's setup left ``random`` in, if it used it."""
        self.unshared = unshared.Unshared()

    def judge(self, body: memoryview, fd: int) -> protocol.CheckResult:
        """In a check's child: decode the check and run it on channel `fd`."""
        signal.signal(signal.SIGINT, signal.default_int_handler)
        timers.install()
        return self.run(_checks.decode(body), fd)

    def run(self, check: protocol.Check, fd: int) -> protocol.CheckResult:
        capture = Capture()

        def result(status: str, reason: str = "") -> protocol.CheckResult:
            return protocol.CheckResult(
                id=check.id,
                status=status,
                reason=reason,
                output=capture.text(),
                stop=timers.overran or answers.unread_left() or sidebyside.overlapped,
                crossings=chan.sent,
            )

        cpu_s, wall_s = self.hello.cpu_s, self.hello.wall_s
        if check.cpu_s > 0:
            cpu_s, wall_s = check.cpu_s, wall_s * check.cpu_s / cpu_s
        os.set_blocking(fd, True)
        chan = Channel(fd, time.monotonic() + wall_s + 2.0)
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        try:
            return self._check(check, chan, result, cpu_s)
        finally:
            sys.stdout, sys.stderr = stdout, stderr
            # The candidate's child ends when its channel closes: at once,
            # not when this process exits.
            chan.close()
            os.close(fd)

    def _check(
        self,
        check: protocol.Check,
        chan: Channel,
        result: Callable[..., protocol.CheckResult],
        cpu_s: float,
    ) -> protocol.CheckResult:
        try:
            code = Compiled(check)
        except TestBroken as exc:
            return result("error", str(exc)[:500])
        scope: dict[str, Any] = {
            "__name__": TEST_MODULE,
            "__builtins__": builtins,
            WITHIN: within,
            answers.MAP: answers.answers,
        }
        random.setstate(self.random_state)
        # Before the test runs: what it changes is handed over.
        state = world.World(code.attributes, code.names)
        self.unshared = unshared.Unshared(state.assigned.names())
        try:
            if code.prelude is not None:
                exec(code.prelude, scope)
        except Exception as exc:  # a skeleton only the completion finishes
            why = f"the prompt does not run on its own, without the completion: {_reason(exc)}"
            return result("error", f"strict scoring: {why}"[:500])
        try:
            before = dict(scope)
            used = testrandom.seedings()
            exec(code.setup, scope)
        except Exception as exc:
            return result("error", f"the test's setup failed: {_reason(exc)}")
        # A test that seeds at module level hands that state to the child.
        self.setup_random = testrandom.state() if testrandom.seedings() != used else None
        ours = {k for k, v in scope.items() if k not in before or before[k] is not v}
        prelude = {k: v for k, v in before.items() if k not in ours}
        twins = _twins(code.prelude, prelude)
        talk = session.Session(chan, TEST_MODULE, twins, state)
        weakheld.install(talk)  # the test's gc.collect() lets go of what it let go
        # The budget runs from the child's first word: serving what it asks
        # while its names are read counts too (a flood of requests there is
        # the answer's timeout, not a verifier killed by its CPU ceiling).
        timers.arm(cpu_s, lambda: served.served_cpu_ms(cpu_s, chan.asked) / 1000.0)
        try:
            return self._meet(check, code, scope, ours, prelude, talk, chan, result)
        except CheckTimeout:
            return result("timeout", f"the test ran out of its CPU budget of {cpu_s:g}s")
        finally:
            timers.disarm()

    def _meet(
        self,
        check: protocol.Check,
        code: Compiled,
        scope: dict[str, Any],
        ours: set[str],
        prelude: dict[str, Any],
        talk: session.Session,
        chan: Channel,
        result: Callable[..., protocol.CheckResult],
    ) -> protocol.CheckResult:
        """Read the child's names, bind them, and run the driver."""
        try:
            first = chan.receive()
        except CandidateGone as exc:
            return result("failed", str(exc))
        if isinstance(first, protocol.LoadFailed):
            status = first.status if first.status in ("failed", "error") else "failed"
            return result(status, first.reason[:500])
        if not isinstance(first, protocol.Loaded):
            return result("failed", "the candidate's process answered out of turn")
        try:
            self._bind(scope, check.entry, first.names, code.names - ours, talk, prelude)
        except CheckTimeout:
            raise
        except BaseException as exc:  # the child died, exited or refused a read
            return result("failed", f"the candidate's names could not be read: {_reason(exc)}")
        testnames.bind(scope, code.names)
        if talk.world is not None:
            talk.world.assigned.watch_globals(scope, sorted(code.rebound(first.names, prelude)))
        random.setstate(self.random_state)
        talk.random_state = testrandom.state()
        talk.seeds, talk.uses = testrandom.seedings()
        if self.setup_random is not None:  # a seeding: sent with the first request
            random.setstate(self.setup_random)
        return self._drive(code.driver, scope, result)

    def _bind(
        self,
        scope: dict[str, Any],
        entry: str,
        names: list[Any],
        wanted: set[str],
        talk: session.Session,
        prelude: dict[str, Any],
    ) -> None:
        """Point the test's names at the candidate's definitions, as the
        single program would resolve them, except the builtins (the test
        keeps the real ones) and the prelude's modules and constants (a
        candidate that rebinds ``math`` to an object whose ``fabs`` says 0
        must not decide the test's comparisons). A class the prelude defines
        is the candidate's, as in the single program (its instances are
        compared through the prelude's twin). A function the prelude
        defines too is `guarded`: the prelude's own answer must agree."""
        found: dict[str, Any] = {}
        for item in names[:10_000]:
            if type(item) is list and len(item) == 2 and type(item[0]) is str:
                name = item[0]
                if name in (WITHIN, answers.MAP):
                    continue
                if name == entry or (name in wanted and not hasattr(builtins, name)):
                    found[name] = item[1]
        for name, tree in found.items():
            trusted = prelude.get(name, _UNSET)
            if name != entry and trusted is not _UNSET and not isinstance(trusted, type):
                if not isinstance(trusted, FunctionType):
                    continue  # the prompt's module or constant stays the test's
            value = talk.decode(tree)
            if name != entry and isinstance(trusted, FunctionType):
                value = guarded(name, value, trusted)
            elif name != entry and isinstance(trusted, type):
                talk.guard_class(name, value, trusted)
                value = members.as_prompt_enum(talk, value, trusted)
            scope[name] = value
        shared = [
            name
            for name in sorted(wanted)
            if type(prelude.get(name)) in wire.MUTABLE and scope.get(name) is prelude[name]
        ]
        if shared:  # the prompt's containers: one object each in one program
            talk.keep_names(scope, shared)
        watched = [n for n in sorted(wanted) if n not in found and _followed(prelude, n)]
        if watched:  # one namespace: what the program's code rebinds, the test reads
            stateful = [n for n in watched if isinstance(prelude[n], collections.abc.Iterator)]
            talk.watch_names(scope, watched, stateful)
        if entry not in found:

            def candidate(*args: Any, **kwargs: Any) -> Any:
                return talk.ask(-1, "call", (entry, args, kwargs or None))

            candidate.__name__ = entry
            scope[entry] = candidate

    def _drive(
        self,
        driver: CodeType,
        scope: dict[str, Any],
        result: Callable[..., protocol.CheckResult],
    ) -> protocol.CheckResult:
        try:
            exec(driver, scope)
            timers.disarm()
        except CheckTimeout:
            raise
        except CallTimeLimit as exc:
            return result("timeout", str(exc))
        except CheckSetupError as exc:
            return result("error", str(exc)[:500])
        except BaseException as exc:
            timers.disarm()  # the verdict is in: no late CPU signal inside _reason
            return result("failed", _failure(exc, self.unshared.changed()))
        told = _told()
        return result("passed") if told is None else result("failed", told[:500])


def _told() -> str | None:
    """The first limit met in the check that fails it whatever the test did
    after: a refusal or what did not cross (`handles.Refused.told`), or a
    write into the shared directory the guard refused (`sharedwd`)."""
    return handles.Refused.told or next(iter(sharedwd.REFUSED), None)


def _followed(prelude: dict[str, Any], name: str) -> bool:
    """Is the prompt's ``name`` a value the program's code may rebind (not
    a module, class or function, which stay the test's or are bound as
    the program's definitions)?"""
    value = prelude.get(name, _UNSET)
    if value is _UNSET or name.startswith("__"):
        return False
    return not isinstance(value, ModuleType) and not callable(value)


def _twins(prelude_code: CodeType | None, prelude: dict[str, Any]) -> dict[str, type]:
    """The prelude's own classes by name, for comparing instances of the
    candidate's classes of those names. Taken from a run of the prelude of
    their own: the test's scope rebinds the prelude's names to the
    candidate's definitions, and a method that names its own class (``isinstance(o,
    P)`` in ``__eq__``) must find the prelude's class, as in one program."""
    names = {k for k, v in prelude.items() if isinstance(v, type) and v.__module__ == TEST_MODULE}
    if not names or prelude_code is None:
        return {}
    private: dict[str, Any] = {"__name__": TEST_MODULE, "__builtins__": builtins, WITHIN: within}
    state = random.getstate()
    try:
        exec(prelude_code, private)
    except Exception:
        private = prelude
    finally:
        random.setstate(state)
    return {
        v.__qualname__: v
        for k, v in private.items()
        if k in names and isinstance(v, type) and v.__module__ == TEST_MODULE
    }


_UNSET = object()
_checks = msgspec.msgpack.Decoder(protocol.Check)
WARM = (
    "unittest.mock",
    "decimal",
    "fractions",
    "datetime",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
    "typing",
    "json",
    "math",
    "re",
)
"""Standard modules a check imports (the state it hands over, the test's
own imports): imported once here, where they are copied into every check,
instead of once per check (unittest alone costs about 10 ms)."""


def _warm() -> None:
    for name in WARM:
        importlib.import_module(name)
    world.prepare()
    autospecs.prepare()
    measures.prepare()
    unshared.prepare()


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # As init of its PID namespace this process gets only the signals it
    # handles: none, so a check running under our uid (a user namespace)
    # cannot interrupt it. Each check gets Python's handlers back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Frames go out on a descriptor of their own; whatever a check writes
    # to fds 1 and 2 (below Python's sys.stdout) is dropped.
    out_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    try:
        hello = msgspec.msgpack.decode(frames.FrameReader(0).frame(), type=protocol.VerifierHello)
    except EOFError:
        return
    frames.spin(hello.spin_s)
    if hello.memory_mb > 0:
        limit = hello.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    verifier = Verifier(hello)
    _warm()
    house = checkfork.CheckFork(hello, out_fd, verifier.judge)
    # Not before: a user namespace maps its ids through our own /proc files,
    # which no longer belong to us once we are not dumpable.
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    frames.write_all(out_fd, protocol.encode_frame(house.ready()))
    # What the process holds now is permanent: frozen objects are never
    # scanned by a check's collector, so checks copy fewer pages on write.
    gc.freeze()
    house.serve()
    house.close()


if __name__ == "__main__":
    main()
