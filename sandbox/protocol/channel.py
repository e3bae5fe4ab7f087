"""What a verifier and a candidate's child say on a job's channel.

Values travel as `wire` trees. Either side may ask the other to act on an
object the other side owns (`Op`); the answer is a `Reply`. While a side
waits for its reply it serves the other's requests, so a candidate can
call back a function the test passed it, and that function can call the
candidate again.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Loaded(msgspec.Struct, frozen=True, tag="loaded", array_like=True):
    """The child ran the candidate's program and waits for requests.

    ``names``: ``[name, tree]`` for each function and class the program
    itself defines, so the test's names resolve as in the single program."""

    names: list[Any] = []


class LoadFailed(msgspec.Struct, frozen=True, tag="load_failed", array_like=True):
    """The candidate's program did not compile (``error``) or raised (``failed``)."""

    status: str
    reason: str


ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow")
"""Binary operators the child may apply to the test's objects (run by the
test's own code, in the verifier), as comparisons are."""


class Op(msgspec.Struct, frozen=True, tag="op", array_like=True):
    """Do ``op`` on object ``ref`` of the receiving side (a handle id in the
    child, an object id in the verifier; -1 with ``call`` and a name in
    ``args``: the child's global of that name, looked up at call time)."""

    ref: int
    op: str
    args: Any = None
    rand: Any = None
    """From the verifier: the state of its ``random`` when the test changed
    it since the last request (a test that seeds ``random`` and then calls
    the candidate sees the draws one program would make)."""
    out: str = ""
    err: str = ""
    """From the child: what the candidate's code printed to stdout and
    stderr since its last message, for the test's own ``sys.stdout`` and
    ``sys.stderr`` (a test that captures what the candidate prints)."""
    shared: list[Any] = []
    """From the child, asking the test's code: ``[k, tree]`` of each
    container both sides hold that the candidate's code changed since the
    sides last agreed (see `kept`), for the test's code to see."""
    capture: int = 0
    """From the child, with a ``call`` of the test's code: which standard
    streams the candidate's code replaced with its own (1: stdout, 2:
    stderr; ``contextlib.redirect_stdout``). What the test's code prints
    in the call comes back in the `Reply`'s ``out`` and ``err``, for the
    child to write there, as one program's ``print`` would."""
    thread: Any = None
    """From the child, asking the test's code from one of the candidate's
    threads other than the one serving the verifier: ``[number, name]`` of
    that thread, for the verifier to run the test's code on a thread of its
    own standing for it (`strict.lanes`)."""
    running: list[Any] = []
    """From the child, asking the test's code while calls of the test's are
    running: ``[f, [j, ...], [[j, tree], ...]]`` for each such call ``f``
    whose containers ``j`` are kept in step, with those the candidate's code
    changed since the sides last agreed (see `running`)."""


class Reply(msgspec.Struct, frozen=True, tag="reply", array_like=True):
    """The answer to an `Op`: a value tree, or (``ok`` false) an exception
    tree; ``writeback`` is ``[n, tree]`` for each numbered container of the
    request that the callee changed (see `wire`)."""

    ok: bool
    value: Any = None
    writeback: list[Any] = []
    out: str = ""
    err: str = ""
    """See `Op`."""
    kept: list[int] = []
    """Numbers of the request's containers the answering side's code still
    holds, for both sides to keep in sync from now on (see `kept`)."""
    shared: list[Any] = []
    """``[k, tree]`` of each kept container the answering side changed."""
    running: list[Any] = []
    """From the verifier, answering the child's `Op` that named calls in
    step (its ``running``): ``[f, [[j, tree], ...]]`` of the containers of
    those calls the test's code changed meanwhile."""


class Logged(msgspec.Struct, frozen=True, tag="logged", array_like=True):
    """From the child, before a `Reply` or an `Op`: the log records the
    candidate's code emitted since its last message, each ``[logger name,
    level, message, function, line, traceback text or None]``, for the
    test's loggers (see `logtap`)."""

    records: list[Any]


ChannelMessage = Loaded | LoadFailed | Op | Reply | Logged
