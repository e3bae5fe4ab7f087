"""The verifier's side of one check's conversation with the candidate's child.

A `Session` sends the test's requests on the job's channel (`ask`), serving
the child's requests back into the test's objects while it waits, and
rebuilds what comes back with `wire`: values, `handles.Handle` objects for
the child's objects, stand-in classes for the child's exception classes.
The child may call the test's functions and read public attributes of
instances of the test's own classes, and nothing else.
"""

from __future__ import annotations

import builtins
import enum
import random
import sys
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

from .. import protocol
from ..values import logtap, plaincall, wire, world
from . import skeleton, testobjects, testrandom, twins
from .handles import (
    BASES,
    EXC_CLASS,
    IS_CLASS,
    CandidateError,
    CandidateExit,
    CandidateGone,
    CheckSetupError,
    Handle,
    Refused,
)

_READS = frozenset({"plain", "state"})
"""Requests that only read a value (with the builtin type's own methods)."""
MAX_HANDLES = 100_000
OUTPUT_BUDGET = 1 << 20
"""Characters of the candidate's output a check passes on to the test."""
MAX_NESTING = 200
"""Calls in flight between the two sides at once (a callback calling the
candidate calling back...)."""


class Session:
    """One check's exchange with the child over ``chan`` (a `verifier.Channel`)."""

    def __init__(
        self,
        chan: Any,
        test_module: str,
        twins: dict[str, type] | None = None,
        state: world.World | None = None,
    ) -> None:
        self.chan = chan
        self.world = state
        """The test's process state as last handed to the child (`world`)."""
        self.test_module = test_module
        self.twins = twins or {}
        self.guards: dict[int, tuple[str, Callable[..., Any]]] = {}
        """See `handles.Asker.guards`."""
        """The prelude's own classes by name: an instance of the candidate's
        class of that name is compared as the prelude's class would."""
        self.turn = threading.RLock()
        self.handles: dict[int, Any] = {}
        self.members: dict[int, int] = {}
        """The prompt's enum members that stand for the program's (by handle)."""
        self.objects: list[Any] = []
        self.object_ids: dict[int, int] = {}
        self.standins: dict[int, type[BaseException]] = {}
        self.depth = 0
        self.random_state: object = None
        self.seeds, self.uses = testrandom.seedings()
        self.output_budget = OUTPUT_BUDGET
        """What the child's ``random`` was last set to, and the count of
        seedings then (a test that seeds twice with one seed, around a call
        that drew, sets the state it had before; see `_random`)."""
        self.epoch = 0
        """See `handles.Asker.epoch`."""
        self.nesting = 0

    # --- wire hooks ---------------------------------------------------------

    def foreign(self, v: object) -> object:
        """An object of the test's that the child gets a proxy for."""
        if type(v) is Handle and v._session is self:
            return ["h", v._hid]
        if id(v) in self.members:  # a member of the program's enum, as the prompt's
            return ["h", self.members[id(v)]]
        if isinstance(v, type) and v in self.standins.values():
            hid = next(k for k, c in self.standins.items() if c is v)
            return ["h", hid]
        if isinstance(v, types.ModuleType):
            raise CheckSetupError("the test passed a module to the candidate")
        if isinstance(v, Exception) and self.nesting < 4:
            self.nesting += 1  # an exception as a value (its args may hold one)
            try:
                return self._exc_tree(v, self._codec())
            finally:
                self.nesting -= 1
        return ["v", self._own(v)]

    def _own(self, v: object) -> int:
        """The number the child knows one of the test's objects by."""
        vid = self.object_ids.get(id(v))
        if vid is None:
            vid = self.object_ids[id(v)] = len(self.objects)
            self.objects.append(v)
        return vid

    def refer(self, t: list[Any]) -> object:
        tag = t[0]
        if tag == "v":
            if len(t) != 2 or type(t[1]) is not int or not 0 <= t[1] < len(self.objects):
                raise wire.NotData("unknown verifier object")
            return self.objects[t[1]]
        if tag == "h":
            return self._handle(t)
        return self._exception(t)

    def _handle(self, t: list[Any], depth: int = 0) -> Any:
        if len(t) not in (5, 6) or type(t[1]) is not int or type(t[2]) is not int:
            raise wire.NotData("malformed handle")
        hid, flags, base, name = t[1], t[2], t[3], t[4]
        known = self.handles.get(hid)
        if known is not None:
            return known
        if len(self.handles) >= MAX_HANDLES:
            raise wire.NotData("too many objects")
        if type(base) is not str or type(name) is not str:
            raise wire.NotData("malformed handle")
        if flags & EXC_CLASS:
            bases = t[5] if len(t) == 6 and type(t[5]) is list else []
            made: Any = self._standin(hid, base, name, bases, depth)
            self.handles[hid] = made
            return made
        made = self.handles[hid] = Handle(self, hid, flags, BASES.get(base), name[:200])
        if made._base is not None:
            # Read now, while the request that returned it is still timed:
            # work put off until the test looks at the value is the call's.
            made._plain()
        elif isinstance(self.twins.get(made._name), enum.EnumMeta) and not flags & IS_CLASS:
            member = made._plain()  # the prompt's member itself: ``is`` holds too
            if member is not twins.NO_VALUE:
                self.handles[hid] = member
                self.members[id(member)] = hid
                return member
        return made

    def _standin(
        self, hid: int, base: str, name: str, bases: list[Any], depth: int
    ) -> type[BaseException]:
        """The verifier's class for an exception class of the candidate's:
        derived from the stand-ins of its own bases (so ``except`` on a base
        class of the program's matches), else from its nearest builtin base.
        Its ``__str__`` gives the text the candidate's class gave, if any."""
        parent = getattr(builtins, base, None)
        if not (isinstance(parent, type) and issubclass(parent, BaseException)):
            parent = Exception
        # A program's subclass of a BaseException-only builtin (SystemExit,
        # KeyboardInterrupt, GeneratorExit) stays one: raised, it is the
        # candidate's exit, never caught by the test's ``except Exception``.
        parents: list[type] = []
        for item in bases[:8] if depth < MAX_EXC_DEPTH else []:
            made = None
            if type(item) is str:
                made = getattr(builtins, item, None)
            elif type(item) is list and len(item) >= 2 and item[0] == "h":
                made = self._handle(item, depth + 1)
            if isinstance(made, type) and issubclass(made, BaseException) and made not in parents:
                parents.append(made)
        label = name if name.isidentifier() else "CandidateException"
        body = {"__module__": "candidate", "__str__": _standin_str}
        try:
            cls = type(label[:100], tuple(parents) or (parent,), body)
        except TypeError:  # bases no class can have at once
            cls = type(label[:100], (parent,), body)
        self.standins[hid] = cls
        return cls

    def _exception(self, t: list[Any], depth: int = 0) -> BaseException:
        if len(t) not in (5, 7, 8) or type(t[1]) is not str:
            raise wire.NotData("malformed exception")
        exc = self._exception_made(t)
        if len(t) >= 7 and not isinstance(exc, CandidateError | CandidateExit):
            self._exception_extra(exc, t[5], t[6])
        cause = t[7] if len(t) == 8 else None
        if type(cause) is list and cause[:1] == ["e"] and depth < MAX_EXC_DEPTH:
            made = self._exception(cause, depth + 1)  # ``raise ... from``
            if not isinstance(made, CandidateError | CandidateExit):
                exc.__cause__ = made
        return exc

    def _exception_extra(self, exc: BaseException, attrs_tree: Any, text: Any) -> None:
        """Give the rebuilt exception the candidate's attributes (values
        under the usual rules) and, for a stand-in, the candidate's text."""
        if attrs_tree is not None:
            try:
                attrs = self._codec().decode(attrs_tree)
            except wire.NotData:
                attrs = {}
            if type(attrs) is dict:
                for key, value in attrs.items():
                    if type(key) is str and not key.startswith("__"):
                        try:
                            setattr(exc, key, value)
                        except (AttributeError, TypeError):
                            pass
        if type(text) is str and type(exc) in self.standins.values():
            _TEXTS[exc] = text[:10_000]

    def _exception_made(self, t: list[Any]) -> BaseException:
        type_name, cls_tree, args_tree = t[1][:100], t[3], t[4]
        try:
            args = self._codec().decode(args_tree)
            args = args if type(args) is tuple else (str(args),)
        except wire.NotData:
            args = ()
        if cls_tree is None:
            cls = getattr(builtins, type_name, None)
            if not (isinstance(cls, type) and issubclass(cls, BaseException)):
                return CandidateError(_describe(type_name, args))
        else:
            cls = self._handle(cls_tree)
            if not (isinstance(cls, type) and issubclass(cls, BaseException)):
                return CandidateError(_describe(type_name, args))
        if not issubclass(cls, Exception):
            return CandidateExit(_describe(type_name, args))
        try:
            return cls(*args)
        except Exception:
            return CandidateError(_describe(type_name, args))

    def guard_class(self, name: str, value: Any, trusted: type) -> None:
        """The program's ``value`` for the prelude's class ``trusted``: the
        objects the test builds with it must agree with the prelude's (see
        `handles.Asker.guards`); an exception class's stand-in in its place
        would build them in the verifier, unguarded. A class the prelude
        imports (``from fractions import Fraction``) is its own twin: a
        program that redefines it must not build the test's expected values.
        A prompt's class whose constructor is a stub builds nothing to
        compare: its objects are the program's alone (`skeleton`)."""
        own = trusted.__module__ == self.test_module
        if type(value) is Handle:
            twin = self.twins.get(trusted.__qualname__) if own else trusted
            if twin is not None and not skeleton.builds_nothing(twin):
                self.guards[value._hid] = (name, twin)
        elif not issubclass(trusted, BaseException):
            raise Refused(f"strict scoring: the program's {name} is not a class")

    def decode(self, tree: object) -> Any:
        try:
            return self._codec().decode(tree)
        except wire.NotData as exc:
            raise CandidateError(f"the candidate sent {exc}") from None

    def _codec(self, memo: list[Any] | None = None) -> wire.Codec:
        return wire.Codec(self.foreign, self.refer, memo)

    # --- asking the child ---------------------------------------------------

    def ask(self, ref: int, op: str, args: object = None) -> Any:
        """Do ``op`` on the child's object ``ref`` and return the value, one
        request at a time: a test that calls the candidate from several
        threads (a thread pool's ``map``) takes turns on the one channel,
        as the child answers one request at a time anyway."""
        with self.turn:
            return self._ask(ref, op, args)

    def _ask(self, ref: int, op: str, args: object) -> Any:
        if op not in _READS:
            self.epoch += 1
        codec = self._codec()
        payload: object = None
        if op == "call" and ref >= 0 and type(args) is tuple and len(args) == 2:
            payload = plaincall.plain_args(*args)
        try:
            if payload is None:
                payload = codec.encode(args)
        except wire.NotData as exc:
            raise CheckSetupError(f"the test passed a value that cannot be sent: {exc}") from None
        sent = len(codec.memo)
        changed = self.world.changes(self._codec().encode) if self.world else None
        if changed is not None:
            self._exchange(protocol.Op(ref=world.REF, op="world", args=changed))
        reply = self._exchange(protocol.Op(ref=ref, op=op, args=payload, rand=self._random()))
        if reply.ok and not reply.writeback and type(reply.value) in wire.PLAIN:
            return reply.value  # what decode would make of it
        try:
            value = codec.decode(reply.value)
            if type(reply.writeback) is not list:
                raise wire.NotData("malformed write-back")
            for item in reply.writeback:
                if type(item) is not list or len(item) != 2 or type(item[0]) is not int:
                    raise wire.NotData("malformed write-back")
                if not 0 <= item[0] < sent:
                    raise wire.NotData("write-back to an unknown container")
                codec.refill(codec.memo[item[0]], item[1])
        except wire.NotData as exc:
            raise CandidateError(f"the candidate sent back {exc}") from None
        except TypeError as exc:  # an unhashable key or set item
            raise CandidateError(f"the candidate sent back a bad value: {exc}") from None
        if not reply.ok:
            if isinstance(value, BaseException):
                raise value
            raise CandidateError("the candidate's process sent a malformed exception")
        return value

    def _random(self) -> object:
        """The state of ``random`` for the child, if the test changed it
        since it was last sent (only this way: the child's draws never
        reach the test's ``random``). Read only after the test used the
        module: a state is 625 numbers, and most calls come with none."""
        seeds, uses = testrandom.seedings()
        if uses == self.uses:
            return None
        self.uses = uses
        state = random.getstate()
        if state == self.random_state and seeds == self.seeds:
            return None
        self.random_state, self.seeds = state, seeds
        version, internal, gauss = state
        return [version, list(internal), gauss]

    def _emit(self, out: object, err: object) -> None:
        """What the candidate printed, to the test's current streams, up to
        `OUTPUT_BUDGET` characters a check (the child keeps to it too)."""
        for text, stream in ((out, sys.stdout), (err, sys.stderr)):
            if type(text) is str and text and self.output_budget > 0:
                kept = text[: self.output_budget]
                self.output_budget -= len(kept)
                try:
                    stream.write(kept)
                except Exception:
                    pass

    def _exchange(self, op: protocol.Op) -> protocol.Reply:
        if self.depth >= MAX_NESTING:
            raise CandidateError("calls between the test and the candidate nest too deeply")
        self.depth += 1
        try:
            self.chan.send(op)
            while True:
                msg = self.chan.receive()
                if (type(msg) is protocol.Reply or type(msg) is protocol.Op) and (
                    msg.out or msg.err
                ):
                    self._emit(msg.out, msg.err)
                if type(msg) is protocol.Reply:
                    return msg
                if type(msg) is protocol.Logged:
                    self.output_budget -= logtap.emit(msg.records, self.output_budget)
                    continue
                if type(msg) is protocol.Op:
                    self.chan.send(self._serve(msg))
                    continue
                raise CandidateGone("the candidate's process answered out of turn")
        finally:
            self.depth -= 1

    # --- answering the child (callbacks into the test's objects) ------------

    def _serve(self, op: protocol.Op) -> protocol.Reply:
        codec = self._codec()
        snaps: list[object] = []
        try:
            if type(op.ref) is not int or not 0 <= op.ref < len(self.objects):
                raise AttributeError("no such object")
            target = self.objects[op.ref]
            args = codec.decode(op.args)
            snaps = wire.snapshot(codec.memo)
            value = testobjects.perform(target, op.op, args, self.test_module)
            tree = codec.encode(value)
            return protocol.Reply(ok=True, value=tree, writeback=codec.writeback(snaps))
        except Exception as exc:  # the test's own code raised: the child gets it
            try:  # what the test's code changed before it raised
                changed = codec.writeback(snaps, raised=True)
            except Exception:
                changed = []
            return protocol.Reply(ok=False, value=self._exc_tree(exc, codec), writeback=changed)

    def _exc_tree(self, exc: BaseException, codec: wire.Codec) -> object:
        try:
            args = codec.encode(exc.args)
        except Exception:
            args = ["t", [str(exc)[:2000]]]
        cls = type(exc)
        name = cls.__name__ if getattr(builtins, cls.__name__, None) is cls else ""
        if not name:  # not a builtin: the child gets its nearest builtin base
            base = next(c for c in cls.__mro__ if getattr(builtins, c.__name__, None) is c)
            name = base.__name__
        # The child names it by this number if it raises it on to us.
        return ["e", name, "", None, args, self._own(exc)]


MAX_EXC_DEPTH = 20
"""Levels of exception classes of the program's rebuilt as stand-ins."""
_TEXTS: weakref.WeakKeyDictionary[BaseException, str] = weakref.WeakKeyDictionary()
"""``str()`` of rebuilt exceptions whose candidate class overrides ``__str__``."""


def _standin_str(self: BaseException) -> str:
    text = _TEXTS.get(self)
    if text is not None:
        return text
    base = next(c for c in type(self).__mro__ if getattr(builtins, c.__name__, None) is c)
    return str(base.__str__(self))


def _describe(type_name: str, args: tuple[Any, ...]) -> str:
    text = ", ".join(str(a) for a in args[:3]) if args else ""
    return f"{type_name}: {text}"[:2000] if text else type_name
