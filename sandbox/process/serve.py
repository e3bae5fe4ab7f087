"""The candidate's side of a strict job: run the program, then answer.

Runs in the forked child, after isolation, with the candidate's program
loaded in fresh globals (empty, as the official harnesses exec programs).
It tells the verifier which functions and classes the program defines, then
serves the verifier's requests (`protocol.Op`) on the job's channel until
the verifier hangs up: calls, attribute reads, iteration and the other
operations a `handles.Handle` forwards. Objects the test passed arrive as
`Proxy` objects whose use is a request back to the verifier.

Nothing this child sends can be a pass: it is all values, judged by the
test in the verifier. Names the harness needs are bound at import, before
any candidate code runs, so rebinding builtins cannot change this loop (a
candidate that corrupts its own process only garbles its own answers).
"""

from __future__ import annotations

import _thread
import os
import random
import socket
import sys
from typing import Any, NoReturn

import msgspec

from .. import frames, protocol
from ..values import (
    described,
    idtap,
    kept,
    logtap,
    mirror,
    opened,
    plaincall,
    realclasses,
    running,
    warntap,
    wire,
    world,
)
from . import allowance, childio, fields, methods, operations, pins, sharing, stepped, watched
from .proxy import Proxy

_type = type
_id = id
_len = len
_str = str
_getattr = getattr
_isinstance = isinstance
_issubclass = issubclass
_exec = exec
_compile = compile
_write = os.write
_recv_soon = frames.recv_soon
_socket = socket.socket
_random_setstate = random.setstate
_BaseException = BaseException
_Exception = Exception
_encode_frame = protocol.encode_frame
_decoder = msgspec.msgpack.Decoder(protocol.ChannelMessage)  # type: ignore[var-annotated]
_MUTABLE = frozenset(wire.MUTABLE)
_getrecursionlimit = sys.getrecursionlimit
_RecursionError = RecursionError
_LOWERED = (
    "a reply past the recursion limit of {}, lowered below the check's start: the"
    " candidate's process runs deeper calls around the candidate's code than one program"
)


def run(program: str, channel: int) -> NoReturn:
    """Load the program, report its names, serve until hung up; never returns."""
    peer = _Peer(channel)
    scope: dict[str, object] = {}
    try:
        code = _compile(program, "<candidate>", "exec")
    except _BaseException as exc:
        peer.send(protocol.LoadFailed(status="error", reason=described.reason(exc)))
        _done()
    realclasses.watch()  # the standard classes, before the program can rebind them
    try:
        _exec(code, scope)
    except _BaseException as exc:
        flush()
        peer.send(protocol.LoadFailed(status="failed", reason=described.reason(exc)))
        _done()
    peer.scope = scope
    peer.logs.take()  # what the program logged as it loaded: before the test
    try:
        names = [[k, peer.codec().encode(v)] for k, v in described.defined(scope)]
    except _BaseException:
        names = []
    peer.send(protocol.Loaded(names=names))
    while True:
        with peer.turn:  # a thread of the candidate's may have a request out
            msg = peer.receive()
        if msg is None:
            _done()
        if _type(msg) is protocol.Op and msg.op == "map":
            peer.answer_each(msg)
        elif _type(msg) is protocol.Op:
            peer.serve(msg)


class _Peer(sharing.Sharing):
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.sock = _socket(fileno=fd)
        self.frames = frames.Frames(protocol.MAX_FRAME)
        self.chunk = memoryview(bytearray(1 << 14))
        self.sent = 0
        self.allowance = allowance.Allowance()
        self.scope: dict[str, object] = {}
        self.objects: list[object] = []
        self.object_ids: dict[int, int] = {}
        self.pins = pins.Pins(lambda vid: Proxy(self, vid))
        self.origins: dict[int, tuple[BaseException, int]] = {}
        self.raised = described.Raised(self.origins)
        self.driven: dict[int, object] = {}
        """The test's coroutines (by the verifier's number), as `stepped` runs them."""
        self.driven_ids: dict[int, int] = {}
        self.watched = watched.Watched()
        self.nesting = 0
        self.fields = fields.Fields(self.ask)
        self.mirror = mirror.Mirror()
        idtap.install(lambda v: _type(v) is Proxy)
        self.kept = kept.Kept(self.codec)
        self.opened = opened.Opened()
        """Requests still being answered, each way (`opened`)."""
        self.held: tuple[list[Any], list[int]] = ([], [])
        """The last request's containers this side still holds: its codec's
        memo and their numbers in it (`kept.held`)."""
        self.streaming = False
        """Serving a data test's inputs (`answer_each`)."""
        self.turn = _thread.RLock()
        self.home = _thread.get_ident()
        """The thread that serves the verifier's requests (`sharing.Sharing.asker`)."""
        budget = [childio.OUTPUT_BUDGET]
        self.out = childio.Output(budget)
        self.left_streams = 0
        """Which of stdout, stderr the candidate's call left replaced (`childio.redirected`)."""
        self.err = childio.Output(budget)
        self.logs = logtap.tap(budget)
        warntap.tap(self.logs, logtap.MAX_RECORDS)

    # --- frames ---------------------------------------------------------

    def send(self, msg: object) -> None:
        self.sent += 1
        if not self.sent % allowance.STEP:
            self.allowance.grant(self.sent)
        data = memoryview(_encode_frame(msg))
        try:
            while data:
                data = data[_write(self.fd, data) :]
        except OSError:
            _done()  # the verifier hung up

    def receive(self) -> Any:
        """The next message; None when the verifier hung up or sent a frame
        past the cap."""
        frame = self.frames.next(self._read)
        return None if frame is None else _decoder.decode(frame)

    def _read(self) -> memoryview:
        try:
            return self.chunk[: _recv_soon(self.sock, self.chunk)]
        except OSError:
            return self.chunk[:0]

    # --- values -----------------------------------------------------------

    def codec(self, memo: list[Any] | None = None) -> wire.Codec:
        return wire.Codec(self.foreign, self.refer, memo, self.kept.index, self.opened)

    def foreign(self, v: object) -> object:
        """A handle on one of this process's objects; an exception (an
        argument to the test's callback) as a value, the test's own as itself."""
        if _type(v) is Proxy:
            return ["v", v._vid]
        stands = methods.standing_for(v)
        if stands is not None:  # the test's function set on a class of the program's
            return ["v", stands._vid]
        if _issubclass(_type(v), _Exception) and self.nesting < 4:
            return self._exception(v)  # type: ignore[arg-type]
        vid = self.driven_ids.get(_id(v))
        if vid is not None and self.driven[vid] is v:  # the test's own coroutine
            return ["v", vid]
        hid = self.object_ids.get(_id(v))
        if hid is None:
            hid = self.object_ids[_id(v)] = _len(self.objects)
            self.objects.append(v)
        tree: list[object] = [
            "h",
            hid,
            described.flags(v),
            described.base(v),
            described.known_name(v, self.scope),
        ]
        if _type(v) is not Proxy and _isinstance(v, type):
            cls: type = v  # type: ignore[assignment]
            if _issubclass(cls, _BaseException):
                tree.append(described.exception_bases(cls, self.foreign))
        elif _type(v) is not Proxy:
            bases = described.standard_bases(v)  # the test's isinstance (`strict.stdfaces`)
            if bases:
                tree.append(bases)
        return tree

    def refer(self, t: list[Any]) -> object:
        if t[0] == "h":
            return self.objects[t[1]]
        if t[0] == "v" and _len(t) == 3:  # the test's coroutine (`stepped`)
            made = self.driven.get(t[1])
            if made is None:
                vid = t[1]
                made = self.driven[vid] = stepped.driven(lambda op, a: self.ask(vid, op, a))
                self.driven_ids[_id(made)] = vid
            return made
        if t[0] == "v":
            return self.pins.proxy(t[1])
        if t[0] == "k":
            return self.kept.get(t)
        return described.rebuild_exception(t, self)

    # --- requests both ways -----------------------------------------------

    def ask(self, ref: int, op: str, args: object = None) -> Any:
        """Use one of the test's objects (a request to the verifier), one
        request at a time: the candidate's threads (a pool mapping the
        test's function) take turns on the one channel."""
        self.take_turn()
        try:
            shared: list[Any] = []
            steps: running.Steps = []
            if op not in _QUIET:  # the test's code may run: it sees the writes
                self.fields.flush()
                if self.fields.lent.lent:
                    self._settle()
                self.fields.clear()
                self.hand_back()
                shared = self.kept.changes_in_call()
                steps = running.in_step(self.opened.serving, self.kept.index)
            return self._ask(ref, op, args, shared, steps)
        finally:
            self.turn.release()

    def take_turn(self) -> None:
        """Hold the channel, noting (`mirror`) when another thread's request
        is out: the verifier weighs it (`strict.sidebyside`)."""
        if not self.turn.acquire(False):
            self.mirror.note(["threads", ""])
            self.turn.acquire()

    def hand_back(self, answering: bool = False) -> None:
        """What the candidate's code did to this process's state, to the
        test's (`mirror`), before the test's code runs again (``answering``:
        with the answer to the test's request)."""
        left, self.left_streams = (self.left_streams if answering else 0), 0
        for bit, name in ((1, "stdout"), (2, "stderr")):
            if left & bit:  # the candidate's stream left in place after its call
                self.mirror.note(["stream", name])
        tree = self.mirror.report(answering)
        if tree is not None:
            self._ask(world.REF, "world", tree)
        rebound = self.watched.changed(self.scope)
        if rebound:
            self._ask(world.REF, "globals", rebound)
            for _, value in rebound:  # the verifier holds its copy alike
                if _type(value) in _MUTABLE:
                    self.kept.add(value)

    def serve(self, op: protocol.Op) -> None:
        """Do the verifier's request ``op`` and send the answer. The
        candidate's code runs without the turn, so its threads may ask the
        test meanwhile; the answer waits for their requests (the turn)."""
        self.fields.clear()  # the test's code ran since the last request
        if op.op == "world" and op.ref == world.REF:
            world.apply(op.args, self.codec().decode, self.scope)
            self.mirror.agree()
            self.send(protocol.Reply(ok=True))
            return
        if op.ref == world.REF and op.op == "watch":
            bound = self.watched.start(self.scope, op.args)
            self.send(protocol.Reply(ok=True, value=self.codec().encode(bound)))
            return
        if op.ref == world.REF and op.op == "keepfield":
            self.send(protocol.Reply(ok=True, value=self._keep_fields(op.args)))
            return
        if op.ref == world.REF and op.op in ("kept", "keepnames"):
            self.send(self._share(op))
            return
        if op.ref == world.REF and op.op == "release":
            self.pins.release(op.args)
            self.send(protocol.Reply(ok=True))
            return
        if op.ref == world.REF and op.op == "drop":  # the program's code may run
            saved = sys.stdout, sys.stderr  # (``__del__``, weak callbacks)
            sys.stdout, sys.stderr = self.out, self.err
            try:
                gone = pins.drop(self.objects, self.object_ids, op.args)
            finally:
                sys.stdout, sys.stderr = saved
            self.send(protocol.Reply(ok=True, value=gone, out=self.out.take(), err=self.err.take()))
            return
        if op.rand is not None:
            _set_random(op.rand)
            self.mirror.agree_random()
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = self.out, self.err
        try:
            ok, value, writeback = self._serve(op)
        finally:
            self.left_streams = childio.redirected(self.out, self.err)
            sys.stdout, sys.stderr = saved
        self.take_turn()
        try:
            self.send(self._answer(ok, value, writeback))
        finally:
            self.turn.release()

    def _answer(self, ok: bool, value: object, writeback: list[Any]) -> protocol.Reply:
        """The reply to a request the candidate's code answered: with what
        it did to its state and to the containers both sides hold."""
        shared: list[Any] = []
        try:
            self.fields.flush()
            if self.fields.lent.lent:
                self._settle()
            self.hand_back(answering=True)
            weak = self.pins.weakly()
            if weak:  # the test's objects it holds weakly: told when they go
                self._ask(world.REF, "weak", weak)
            shared = self.kept.changes()
        except _BaseException as exc:  # a write the verifier refused
            ok, value, writeback = False, self._raised(exc), []
        (memo, held), self.held = self.held, ([], [])
        self.kept.take(held, memo)  # past the table's size the verifier refuses
        out, err = self.out.take(), self.err.take()
        self.send_logs()
        return protocol.Reply(
            ok=ok,
            value=value,
            writeback=writeback,
            out=out,
            err=err,
            kept=held,
            shared=shared,
        )

    def answer_each(self, op: protocol.Op) -> None:
        """A data test's inputs at once (`answers` in the verifier): call
        the function on each in order, sending each answer as it comes."""
        if op.rand is not None:
            _set_random(op.rand)
            self.mirror.agree_random()
        items = op.args if _type(op.args) is list else []
        self.streaming = True  # no request of the verifier's is open for them
        try:
            for args in items:
                self.serve(protocol.Op(ref=op.ref, op="call", args=args))
        finally:
            self.streaming = False

    def send_logs(self) -> None:
        """The log records the candidate's code emitted since the last
        message, for the test's own loggers (`logtap`)."""
        if self.logs.records:
            self.send(protocol.Logged(records=self.logs.take()))

    def _serve(self, op: protocol.Op) -> tuple[bool, object, list[Any]]:
        codec = self.codec()
        snaps: list[object] = []
        try:
            args = plaincall.plain_call(op.args) if op.op == "call" and op.ref >= 0 else None
            if args is not None:  # plain arguments: no containers to number
                value = self._performed(op, args, codec)
                if plaincall.own_tree(value):
                    return True, value, []
                tree = codec.encode(value)
                value = None
                self.held = codec.memo, kept.held(codec.memo, [], self.kept, True)
                return True, tree, []
            args = codec.decode(op.args)
            snaps = wire.snapshot(codec.memo)
            before = kept.counts(codec.memo)
            value = self._performed(op, args, codec, snaps)
            tree = codec.encode(value)
            value = None
            self.held = codec.memo, kept.held(codec.memo, before, self.kept, op.op in kept.ANSWERS)
            return True, tree, codec.writeback(snaps)
        except _BaseException as exc:
            try:
                tree = self._raised(exc)
            except _BaseException:
                return False, ["e", "Exception", "", None, ["t", []]], []
            try:  # what the call changed before it raised
                return False, tree, codec.writeback(snaps, raised=True)
            except _BaseException:
                return False, tree, []

    def _raised(self, exc: BaseException) -> object:
        if _type(exc) is wire.NotData:  # a value of ours that does not cross
            return ["e", wire.UNSENT, "", None, ["t", [_str(exc)[:200]]]]
        limit = _getrecursionlimit()
        if _isinstance(exc, _RecursionError) and limit < self.mirror.start[3]:
            # Our own calls around the candidate's run deeper than one program's.
            return ["e", wire.UNSENT, "", None, ["t", [_LOWERED.format(limit)]]]
        return self._exception(exc)

    def _exception(self, exc: BaseException) -> object:
        """An exception's tree (the test's own, passed on, as itself), one
        numbering for all the exceptions inside it (`described.Raised`)."""
        if self.nesting == 0:
            self.raised = described.Raised(self.origins)
        self.nesting += 1
        try:
            return described.exception_tree(exc, self.codec(), self.raised)
        finally:
            self.nesting -= 1

    def perform(self, op: protocol.Op, args: Any) -> Any:
        return operations.perform(self.scope, self.objects, op, args)


_QUIET = frozenset({"fields", "setattrs"})
"""Requests that run none of the test's code (see `fields`)."""


def _set_random(state: Any) -> None:
    """Put ``random`` in the verifier's state (see `protocol.Op.rand`)."""
    try:
        version, internal, gauss = state
        _random_setstate((version, tuple(internal), gauss))
    except _BaseException:
        pass


flush = sharing.flush
_done = sharing.done
