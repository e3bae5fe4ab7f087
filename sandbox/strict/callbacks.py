"""The verifier's answers to the child's requests: a call of a test's
function, a read of a test's object, the child's process state handed back
(`world`), and the exception trees the child gets when the test's code
raises.
"""

from __future__ import annotations

import builtins
from typing import Any

from .. import protocol
from ..values import kept, mirror, wire, world
from . import leftstate, sidebyside, testobjects, weakheld
from .outcomes import Refused, told


class Callbacks:
    """The session's part that serves the child's requests into the test's
    objects (a mixin of `session.Session`, which owns those objects and the
    codec)."""

    world: world.World | None
    objects: list[Any]
    test_module: str
    threads: sidebyside.Threads
    kept: kept.Kept
    watched: set[str]
    """The prompt's names the test reads that the program's code may rebind."""
    test_scope: dict[str, Any]

    def codec(self, memo: list[Any] | None = None) -> wire.Codec:
        raise NotImplementedError

    def _own(self, v: object) -> int:
        raise NotImplementedError

    def _serve(self, op: protocol.Op) -> protocol.Reply:
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
        codec = self.codec()
        snaps: list[object] = []
        try:
            if type(op.ref) is not int or not 0 <= op.ref < len(self.objects):
                raise AttributeError("no such object")
            target = self.objects[op.ref]
            args = codec.decode(op.args)
            snaps = wire.snapshot(codec.memo)
            value = self.threads.timed(
                lambda: testobjects.perform(target, op.op, args, self.test_module)
            )
            tree = codec.encode(value)
            return protocol.Reply(ok=True, value=tree, writeback=codec.writeback(snaps))
        except Exception as exc:  # the test's own code raised: the child gets it
            try:  # what the test's code changed before it raised
                changed = codec.writeback(snaps, raised=True)
            except Exception:
                changed = []
            return protocol.Reply(ok=False, value=self._exc_tree(exc, codec), writeback=changed)

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
                    told(
                        f"strict scoring follows at most {kept.MAX_KEPT} containers"
                        " that both the test and the candidate hold"
                    )

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
            if cls.__module__ != self.test_module:  # a class the candidate can name
                Refused.note(
                    f"strict scoring: the test's code raised {cls.__module__}.{cls.__qualname__}"
                    f" into the candidate's code, which gets it as a builtin {name}"
                    " (its own except clause on that class does not catch it there)"
                )
        # The child names it by this number if it raises it on to us.
        return ["e", name, "", None, args, self._own(exc)]


def _no_reference(value: object) -> object:
    raise wire.NotData("a reference in the child's state")
