"""The verifier's answers to the child's requests: a call of a test's
function, a read of a test's object, the child's process state handed back
(`world`), and the exception trees the child gets when the test's code
raises.
"""

from __future__ import annotations

import builtins
from typing import Any

import msgspec

from .. import protocol
from ..values import kept, lent, mirror, opened, running, stdexc, wire, world
from . import lanes, leftstate, passedon, sidebyside, testobjects, weakheld
from .outcomes import CandidateError, Refused, told

KEPT_FULL = (
    f"strict scoring follows at most {kept.MAX_KEPT} containers"
    " that both the test and the candidate hold"
)
KEPT_CLASH = (
    "strict scoring: the test's code and the candidate's both changed a container they"
    f" both hold within one call, which holds more than {kept.IN_STEP} items with the"
    " others they hold (such containers are brought in step only at the call's start"
    " and end)"
)

RUNNING_PAST = (
    "strict scoring: the candidate's code changed a container of the test's call still"
    " running and then called the test's code, which does not see that change: the"
    f" call's containers hold more than {kept.IN_STEP} items in all (such containers"
    " are brought in step only at the call's start and end)"
)


class Callbacks:
    """The session's part that serves the child's requests into the test's
    objects (a mixin of `session.Session`, which owns those objects and the
    codec)."""

    world: world.World | None
    objects: list[Any]
    object_ids: dict[int, int]
    test_module: str
    threads: sidebyside.Threads
    lanes: lanes.Lanes
    kept: kept.Kept
    opened: opened.Opened
    watched: set[str]
    """The prompt's names the test reads that the program's code may rebind."""
    test_scope: dict[str, Any]
    passed_on: passedon.PassedOn

    def codec(self, memo: list[Any] | None = None) -> wire.Codec:
        raise NotImplementedError

    def _own(self, v: object) -> int:
        raise NotImplementedError

    def _serve(self, op: protocol.Op) -> protocol.Reply:
        if op.capture:
            return self._captured(op)
        if op.ref == world.REF and op.op == "world" and self.world is not None:
            try:  # the child's state (plain data only: no references)
                tree = wire.Codec(_no_reference, _no_reference).decode(op.args)
            except (wire.NotData, TypeError):
                return protocol.Reply(ok=True)
            names = self.world.names
            mirror.take(
                tree,
                self.world.start_cwd,
                told,
                self.threads.contend,
                Refused.note,
                lambda kind, name: leftstate.weigh(kind, name, names),
            )
            self.world.sync(tree[0] if type(tree) is list and tree else None)
            return protocol.Reply(ok=True)
        if op.ref == world.REF and op.op == "weak":
            try:  # numbers of the test's objects (plain data only)
                weakheld.note(self, wire.Codec(_no_reference, _no_reference).decode(op.args))
            except (wire.NotData, TypeError):
                pass
            return protocol.Reply(ok=True)
        if op.ref == world.REF and op.op == "globals":
            self.rebound(op.args)
            return protocol.Reply(ok=True)
        if op.ref == world.REF and op.op == "keepfield":
            return protocol.Reply(ok=True, value=["l", self._keep_fields(op.args)])
        self._take_shared(op.shared)
        steps = self._take_running(op.running)
        codec = self.codec()
        snaps: list[object] = []
        before: list[int] = []
        try:
            if type(op.ref) is not int or not 0 <= op.ref < len(self.objects):
                raise AttributeError("no such object")
            target = self.objects[op.ref]
            args = codec.decode(op.args)
            snaps = wire.snapshot(codec.memo)
            before = kept.counts(codec.memo)
            frame = opened.Frame(codec.memo, codec.ids)
            self.opened.serving.append(frame)
            try:
                todo = (testobjects.perform, target, op.op, args, self.test_module)
                if op.thread is None:  # inline: nesting spends the recursion limit
                    value = self.threads.timed(*todo)
                else:  # on the lane of the candidate's thread that asked
                    value = self.lanes.run(op.thread, self.threads.timed, *todo)
            finally:
                self.opened.serving.remove(frame)
            tree = codec.encode(value)
            value = None  # the arguments stay: a mock holds what it was called with
            writeback = codec.writeback(snaps)
            return self._reply(tree, writeback, codec, before, op.op in kept.ANSWERS, steps)
        except Exception as exc:  # the test's own code raised: the child gets it
            try:  # what the test's code changed before it raised
                changed = codec.writeback(snaps, raised=True)
            except Exception:
                changed = []
            return self._reply(self._exc_tree(exc, codec), changed, codec, before, None, steps)

    def _take_shared(self, items: object) -> None:
        """What the candidate's code changed in the containers both sides
        hold, before the test's code runs (`kept`)."""
        if items:
            try:
                self.kept.apply(items)
            except (wire.NotData, TypeError) as exc:
                raise CandidateError(told(f"the candidate sent {exc}")) from None
            if self.kept.clashed:
                told(KEPT_CLASH)

    def _take_running(self, items: object) -> running.Steps:
        """What the candidate's code changed in the containers of the test's
        calls still running, before the test's code runs (`running`)."""
        if not items:
            return []
        try:
            steps = running.take(self.opened.asked, items, self.codec())
        except (wire.NotData, TypeError) as exc:
            raise CandidateError(told(f"the candidate sent {exc}")) from None
        if (running.PAST, []) in steps:
            Refused.note(RUNNING_PAST)  # named should the check fail
        return steps

    def _reply(
        self,
        tree: object,
        writeback: list[Any],
        codec: wire.Codec,
        before: list[int],
        answer: bool | None,
        steps: running.Steps,
    ) -> protocol.Reply:
        """The reply to the child's request (``answer`` None: the test's
        code raised; else whether its answer is a value the test's code may
        hold on to), with what the test's code changed in the containers
        both sides hold, and the request's containers the test's code goes
        on holding (a mock's recorded arguments, a list of the test's
        object it returned), which both sides hold from now on (`kept`)."""
        held: list[int] = []
        try:
            if before or (answer and codec.memo):
                held = kept.held(codec.memo, before, self.kept, bool(answer))
            shared = self.kept.changes_in_call()
            moved = running.answer(self.opened.asked, steps, self.codec()) if steps else []
        except wire.NotData:
            return protocol.Reply(ok=False, value=["e", "Exception", "", None, ["t", []]])
        if not self.kept.take(held, codec.memo) or self.kept.full:
            # Past the table's size the test's code holds a copy, as it did
            # before holding these was followed (a mock recording a new list
            # in each of thousands of calls): named should the check fail.
            Refused.note(KEPT_FULL)
        return protocol.Reply(
            ok=answer is not None,
            value=tree,
            writeback=writeback,
            kept=held,
            shared=shared,
            running=moved,
        )

    def _keep_fields(self, tree: object) -> list[int]:
        """Hold the test's objects' fields the child names (`lent`) with
        the candidate's copies: each one's number in the kept table, or -1
        (past the table's size the check fails)."""
        try:
            pairs = self.codec().decode(tree)
        except (wire.NotData, TypeError):
            return []
        out = []
        for pair in pairs if type(pairs) is list else ():
            owner, name = pair if type(pair) is list and len(pair) == 2 else (None, None)
            n = -1
            if self._lent(owner) and testobjects.plain(owner, self.test_module):
                n = lent.keep_field(self.kept, owner, name)
            if n < 0 and len(self.kept.objects) >= kept.MAX_KEPT:
                told(KEPT_FULL)
            out.append(n)
        return out

    def _lent(self, v: object) -> bool:
        """Is ``v`` one of the test's objects the child holds a proxy for
        (whose fields it may read: `testobjects.plain`)?"""
        vid = self.object_ids.get(id(v))
        return vid is not None and self.objects[vid] is v

    def _captured(self, op: protocol.Op) -> protocol.Reply:
        """A call whose caller (the candidate's code) put streams of its own
        in place of stdout or stderr: what the test's code prints in it goes
        back with the reply (`protocol.Op.capture`). Only this path costs a
        frame more: a deep recursion through both sides meets the verifier's
        recursion limit where it did."""
        with self.passed_on.redirected(op.capture) as back:
            reply = self._serve(msgspec.structs.replace(op, capture=0))
        return msgspec.structs.replace(reply, out=back[0], err=back[1])

    def rebound(self, tree: object) -> None:
        """The prompt's names the program's code rebound (`process.watched`),
        bound in the test's scope as in one namespace; a container among
        them is held by both sides from now on (`kept`)."""
        try:
            items = self.codec().decode(tree)
        except (wire.NotData, TypeError):
            return
        for item in items if type(items) is list else ():
            if type(item) is list and len(item) == 2 and item[0] in self.watched:
                self.test_scope[item[0]] = item[1]
                if type(item[1]) in wire.MUTABLE and not self.kept.add(item[1]):
                    told(KEPT_FULL)

    def _exc_tree(self, exc: BaseException, codec: wire.Codec) -> object:
        try:
            args = codec.encode(exc.args)
        except Exception:
            args = ["t", [str(exc)[:2000]]]
        cls = type(exc)
        name = cls.__name__ if getattr(builtins, cls.__name__, None) is cls else ""
        kin = None
        if not name:  # not a builtin: the child gets its nearest builtin base
            base = next(c for c in cls.__mro__ if getattr(builtins, c.__name__, None) is c)
            name = base.__name__
            if cls.__module__ != self.test_module:  # a standard module's: its own class there
                kin = stdexc.describe(cls, exc, self.codec().encode)
            if cls.__module__ != self.test_module and kin is None:
                Refused.note(
                    f"strict scoring: the test's code raised {cls.__module__}.{cls.__qualname__}"
                    f" into the candidate's code, which gets it as a builtin {name}"
                    " (its own except clause on that class does not catch it there)"
                )
        # The child names it by this number if it raises it on to us.
        return ["e", name, "", kin, args, self._own(exc)]


def _no_reference(value: object) -> object:
    raise wire.NotData("a reference in the child's state")
