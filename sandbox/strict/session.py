"""The verifier's side of one check's conversation with the candidate's child.

A `Session` sends the test's requests on the job's channel (`ask`), serving
the child's requests back into the test's objects while it waits, and
rebuilds what comes back with `wire`: values, `handles.Handle` objects for
the child's objects, stand-in classes for the child's exception classes.
The child may call the test's functions and read public attributes of
instances of the test's own classes, and nothing else.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Callable
from typing import Any

from .. import protocol
from ..values import kept, lent, likestd, opened, plaincall, wire, world
from . import (
    batched,
    callbacks,
    lanes,
    members,
    passedon,
    sidebyside,
    skeleton,
    standins,
    stdfaces,
    testrandom,
    twins,
    weakheld,
)
from .handleaiter import AsyncIterHandle
from .handles import (
    ASYNC_ITERABLE,
    BASES,
    COROUTINE,
    EXC_CLASS,
    IS_CLASS,
    CandidateError,
    CandidateGone,
    CheckSetupError,
    CoroutineHandle,
    Handle,
    Refused,
    is_handle,
)
from .outcomes import STOPPED, told

_READS = frozenset({"plain", "state", "states", "fields", "type"})
"""Requests that only read a value (with the builtin type's own methods)."""
MAX_HANDLES = 100_000
MAX_NESTING = 200
"""Calls in flight between the two sides at once (a callback calling the
candidate calling back...)."""


class Session(standins.Standins, callbacks.Callbacks):
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
        self.turn = lanes.Turn()
        self.lanes = lanes.Lanes(self.turn, chan)
        """Threads standing for the candidate's threads that call the test's code."""
        self.threads = sidebyside.Threads(told)
        """Whether the candidate's threads called the test's code side by side."""
        self.handles: dict[int, Any] = {}
        self.members: dict[int, int] = {}
        """The prompt's enum members that stand for the program's (by handle)."""
        self.making = False
        """Whether a program's enum member is being asked for (`members`)."""
        self.objects: list[Any] = []
        self.object_ids: dict[int, int] = {}
        self.standins: dict[int, type[BaseException]] = {}
        self.exc_made: dict[int, BaseException] = {}
        self.exc_depth = 0
        self.depth = 0
        self.random_state: object = None
        self.seeds, self.uses = testrandom.seedings()
        self.passed_on = passedon.PassedOn()
        """What the child's ``random`` was last set to, and the count of
        seedings then (a test that seeds twice with one seed, around a call
        that drew, sets the state it had before; see `_random`)."""
        self.epoch = 0
        self.stdbases: dict[int, tuple[type, ...]] = {}
        """See `handles.Asker.epoch`."""
        self.unread = 0
        """Answers of a stream (`answers`) the child will still send."""
        self.lent = 0
        """Objects of the test's sent to the child as references, in all."""
        self.weakly: set[int] = set()
        """Objects of the test's the candidate holds only weakly (`weakheld`)."""
        self.methods: dict[int, int] = {}
        """Bound methods in `objects`, by the id of the object each holds."""
        self.asking = 0
        """Requests of the test's under way (`weakheld.collect` waits for none)."""
        self.nesting = 0
        self.fields_read = batched.Batched("fields")
        """Fields of the child's objects (`field`)."""
        self.opaque: set[int] = set()
        self.unfielded: set[tuple[str, str]] = set()
        """(class name, attribute) read with ``getattr`` where a read of the
        fields did not have it (a method): a cache is only a shortcut."""
        self.lent_fields = lent.Lent()
        """Containers read from the child's objects' fields (`field`)."""
        self.states_read = batched.Batched("states")
        """All the attributes of the child's objects (`state`)."""
        self.kept = kept.Kept(self.codec)
        self.opened = opened.Opened()
        """Requests still being answered, each way (`opened`)."""
        self.watched: set[str] = set()
        self.test_scope: dict[str, Any] = {}
        """Containers both the test and the candidate hold (`kept`)."""

    # --- wire hooks ---------------------------------------------------------

    def foreign(self, v: object) -> object:
        """An object of the test's that the child gets a proxy for."""
        if is_handle(v) and v._session is self:
            return ["h", v._hid]
        if id(v) in self.members:  # a member of the program's enum, as the prompt's
            return ["h", self.members[id(v)]]
        if isinstance(v, enum.Enum) and (hid := members.program_member(self, v)) is not None:
            return ["h", hid]
        if isinstance(v, type) and v in self.standins.values():
            hid = next(k for k, c in self.standins.items() if c is v)
            return ["h", hid]
        if isinstance(v, types.ModuleType):
            raise CheckSetupError("the test passed a module to the candidate")
        if isinstance(v, Exception) and self.nesting < 4:
            self.nesting += 1  # an exception as a value (its args may hold one)
            try:
                return self._exc_tree(v, self.codec())
            finally:
                self.nesting -= 1
        if type(v) is types.CoroutineType:  # driven by the child's loop (`teststeps`)
            return ["v", self._own(v), 1]
        as_standard = likestd.tree(v, self.codec())
        return ["v", self._own(v)] if as_standard is None else as_standard

    def _own(self, v: object) -> int:
        """The number the child knows one of the test's objects by."""
        self.lent += 1
        vid = self.object_ids.get(id(v))
        if vid is None:
            vid = self.object_ids[id(v)] = len(self.objects)
            self.objects.append(v)
            if type(v) is types.MethodType:  # holds its object: not the test's hold
                weakheld.bound(self.methods, v)
        return vid

    def refer(self, t: list[Any]) -> object:
        tag = t[0]
        if tag == "v":
            if len(t) != 2 or type(t[1]) is not int or not 0 <= t[1] < len(self.objects):
                raise wire.NotData("unknown verifier object")
            return self.objects[t[1]]
        if tag == "h":
            return self._handle(t)
        if tag == "k":
            return self.kept.get(t)
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
        kind = CoroutineHandle if flags & COROUTINE else Handle
        kind = AsyncIterHandle if flags & ASYNC_ITERABLE and kind is Handle else kind
        made = self.handles[hid] = kind(self, hid, flags, BASES.get(base), name[:200])
        if len(t) == 6:  # the standard classes the program's class derives from
            self.stdbases[hid] = stdfaces.bases(stdfaces.resolve(t[5]))
        if made._base is not None:
            # Read now, while the request that returned it is still timed:
            # work put off until the test looks at the value is the call's.
            made._plain()
        if isinstance(self.twins.get(made._name), enum.EnumMeta) and not flags & IS_CLASS:
            member = members.as_prompt_member(made)  # the prompt's member: ``is`` holds too
            if member is not twins.NO_VALUE:
                self.handles[hid] = member
                self.members[id(member)] = hid
                return member
        return made

    def field(self, hid: int, name: str) -> Any:
        """The child's object ``hid``'s field ``name``, read with the fields
        of the objects it reaches (`batched`); `twins.NO_VALUE` where it is
        not a field (a property, a method, a class of its own lookup)."""
        found = None if hid in self.opaque else self.fields_read.get(self, hid)
        if found is None:
            self.opaque.add(hid)
            return twins.NO_VALUE
        value = found.get(name, twins.NO_VALUE)
        self.lent_fields.lend(self.handles.get(hid), name, value)
        return value

    def state(self, hid: int) -> Any:
        """The child's object ``hid``'s attributes, read with those of the
        objects it reaches (`batched`)."""
        return self.states_read.get(self, hid)

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
            return self.codec().decode(tree)
        except wire.NotData as exc:
            raise CandidateError(told(f"the candidate sent {exc}")) from None

    def codec(self, memo: list[Any] | None = None) -> wire.Codec:
        return wire.Codec(self.foreign, self.refer, memo, self.kept.index, self.opened)

    # --- asking the child ---------------------------------------------------

    def ask(self, ref: int, op: str, args: object = None) -> Any:
        """Do ``op`` on the child's object ``ref`` and return the value, one
        request at a time; a request of another of the test's threads while
        one is out fails the check (`sidebyside.Threads.overlap`)."""
        if not self.turn.acquire(False):
            # The request out may wait for ever on what this thread holds
            # (a queue's other end): the check fails either way.
            self.chan.hang_up()
            self.threads.overlap()
        self.asking += 1
        try:
            return self._ask(ref, op, args)
        finally:
            self.asking -= 1
            self.turn.release()

    def _ask(self, ref: int, op: str, args: object) -> Any:
        if op not in _READS:
            caches = [*self.fields_read.known.values(), *self.states_read.known.values()]
            if self.lent_fields.lent and not self.lent_fields.settle(self.kept, self._join, caches):
                told(callbacks.KEPT_FULL)
            self.epoch += 1
        codec = self.codec()
        payload = self.request(codec, args, op == "call" and ref >= 0)
        sent = len(codec.memo)
        if self.weakly:
            weakheld.release(self)
        self.hand_over_world()
        frame = opened.Frame(codec.memo, codec.ids)
        self.opened.asked.append(frame)
        try:
            reply = self._exchange(
                protocol.Op(ref=ref, op=op, args=payload, rand=self.child_random())
            )
        finally:
            self.opened.asked.remove(frame)
        try:
            return self.answer(reply, codec, sent)
        except (StopIteration, StopAsyncIteration) as exc:
            if op != "call":  # ends the candidate's iterator, as in one program
                raise
            raise CandidateError(told(STOPPED.format(type(exc).__name__))) from None

    def request(self, codec: wire.Codec, args: object, call: bool) -> object:
        """The tree of a request's ``args`` (a call's: ``(args, kwargs)``)."""
        payload: object = None
        if call and type(args) is tuple and len(args) == 2:
            payload = plaincall.plain_args(*args)
        try:
            return codec.encode(args) if payload is None else payload
        except wire.NotData as exc:
            raise CheckSetupError(f"the test passed a value that cannot be sent: {exc}") from None

    def hand_over_world(self) -> None:
        """Send the process state the test changed since the last request
        (`world`), and what it changed in the containers both sides hold."""
        changed = self.world.changes(self.codec().encode) if self.world else None
        if changed is not None:
            self._exchange(protocol.Op(ref=world.REF, op="world", args=changed))
        if self.kept.objects:
            try:
                items = self.kept.changes()
            except wire.NotData as exc:
                raise CheckSetupError(
                    f"the test passed a value that cannot be sent: {exc}"
                ) from None
            if items:
                self.answer(self._exchange(protocol.Op(ref=world.REF, op="kept", args=items)))

    def keep_names(self, scope: dict[str, Any], names: list[str]) -> None:
        """Hold the prompt's containers ``names`` (module-level lists, dicts,
        sets) in sync with the program's of the same names: one object in
        one program, which the candidate's code may change and the test
        reads, or the other way round."""
        reply = self._exchange(protocol.Op(ref=world.REF, op="keepnames", args=names))
        found = reply.value if reply.ok and type(reply.value) is list else []
        for i in found[: len(names)]:
            if type(i) is not int or not 0 <= i < len(names):
                raise CandidateError(told("the candidate's process sent a malformed message"))
            self.kept.add(scope[names[i]])
        try:
            self.kept.apply(reply.shared)
        except (wire.NotData, TypeError) as exc:
            raise CandidateError(told(f"the candidate sent back {exc}")) from None

    def _join(self, pairs: list[list[Any]]) -> list[int]:
        """Ask the child to hold its objects' fields ``pairs`` (``[handle,
        name]``) with the test's copies (`lent`): their numbers in the
        child's table, or -1."""
        tree = self.codec().encode(pairs)
        got = self._exchange(protocol.Op(ref=world.REF, op="keepfield", args=tree)).value
        if type(got) is not list or not all(type(n) is int for n in got):
            return []
        return got

    def watch_names(self, scope: dict[str, Any], names: list[str], bind: list[str]) -> None:
        """Follow the prompt's names ``names`` as the program's code rebinds
        them (`process.watched`), binding ``bind`` (objects with state of
        their own) to the program's objects now."""
        self.test_scope, self.watched = scope, set(names)
        found = self.answer(
            self._exchange(protocol.Op(ref=world.REF, op="watch", args=[names, bind]))
        )
        for item in found if type(found) is list else ():
            if type(item) is list and len(item) == 2 and item[0] in bind:
                scope[item[0]] = item[1]

    def answer(self, reply: protocol.Reply, codec: wire.Codec | None = None, sent: int = 0) -> Any:
        """The value ``reply`` carries (raised, if the candidate's code
        raised), with what the callee changed written back into the first
        ``sent`` containers ``codec`` numbered for the request, and into
        the containers both sides hold (`kept`)."""
        if (
            reply.ok
            and not (reply.writeback or reply.kept or reply.shared)
            and type(reply.value) in wire.PLAIN
        ):
            return reply.value  # what decode would make of it
        codec = codec or self.codec()
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
            self.kept.apply(reply.shared)
            if not self.kept.take(reply.kept, codec.memo) or self.kept.full:
                told(callbacks.KEPT_FULL)
            if self.kept.clashed:
                told(callbacks.KEPT_CLASH)
        except wire.NotData as exc:
            raise CandidateError(told(f"the candidate sent back {exc}")) from None
        except TypeError as exc:  # an unhashable key or set item
            raise CandidateError(told(f"the candidate sent back a bad value: {exc}")) from None
        if not reply.ok:
            if isinstance(value, BaseException):
                raise value
            raise CandidateError(told("the candidate's process sent a malformed exception"))
        return value

    def child_random(self) -> object:
        """The state of ``random`` for the child, if the test changed it
        since it was last sent (only this way: the child's draws never
        reach the test's ``random``). Read only after the test used the
        module: a state is 625 numbers, and most calls come with none."""
        seeds, uses = testrandom.seedings()
        if uses == self.uses:
            return None
        self.uses = uses
        state = testrandom.state()
        if state == self.random_state and seeds == self.seeds:
            return None
        self.random_state, self.seeds = state, seeds
        version, internal, gauss = state
        return [version, list(internal), gauss]

    def _exchange(self, op: protocol.Op) -> protocol.Reply:
        if self.unread and not self.depth:
            raise CheckSetupError("the test asked the candidate again with answers left unread")
        self.chan.send(op)
        return self.reply()

    def reply(self) -> protocol.Reply:
        """The child's next `Reply`, serving its requests and passing on
        its output and log records until it comes."""
        if self.depth >= MAX_NESTING:
            raise CandidateError(told("calls between the test and the candidate nest too deeply"))
        self.depth += 1
        try:
            while True:
                msg = self.chan.receive()
                if (type(msg) is protocol.Reply or type(msg) is protocol.Op) and (
                    msg.out or msg.err
                ):
                    self.passed_on.emit(msg.out, msg.err)
                if type(msg) is protocol.Reply:
                    return msg
                if type(msg) is protocol.Logged:
                    self.passed_on.records(msg.records)
                    continue
                if type(msg) is protocol.Op:
                    self.chan.send(self._serve(msg))
                    continue
                raise CandidateGone("the candidate's process answered out of turn")
        finally:
            self.depth -= 1
