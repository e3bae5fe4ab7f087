"""The child's part in keeping containers one object with the test's
(a mixin of `serve._Peer`): the requests it has open while the candidate's
code runs (`values.opened`), the test's objects' fields the candidate
changed or kept (`values.lent`), and the verifier's side of the containers
both hold (`values.kept`).
"""

from __future__ import annotations

import _thread
import os
import threading
from typing import Any, NoReturn

from .. import protocol
from ..values import kept, lent, opened, running, wire, world
from . import childio, fields

_type = type
_len = len
_exit = os._exit
_BaseException = BaseException
_ident = _thread.get_ident
_current = threading.current_thread


class Sharing:
    """See the module docstring; `serve._Peer` owns the state named here."""

    kept: kept.Kept
    opened: opened.Opened
    fields: fields.Fields
    scope: dict[str, object]
    streaming: bool
    home: int
    out: childio.Output
    err: childio.Output

    def codec(self, memo: list[Any] | None = None) -> wire.Codec:
        raise NotImplementedError

    def send(self, msg: object) -> None:
        raise NotImplementedError

    def receive(self) -> Any:
        raise NotImplementedError

    def serve(self, op: protocol.Op) -> None:
        raise NotImplementedError

    def send_logs(self) -> None:
        raise NotImplementedError

    def _raised(self, exc: BaseException) -> object:
        raise NotImplementedError

    def perform(self, op: protocol.Op, args: Any) -> Any:
        raise NotImplementedError

    def _ask(
        self,
        ref: int,
        op: str,
        args: object,
        shared: list[Any] | None = None,
        steps: running.Steps | None = None,
    ) -> Any:
        """Send a request and serve the verifier's until its reply comes;
        ``shared`` is what the candidate's code changed in the containers
        both sides hold, for the test's code to see; ``steps`` the test's
        calls still running whose containers are brought in step with it
        (`running`)."""
        codec = self.codec()
        payload = codec.encode(args)
        sent = _len(codec.memo)
        moving = running.outgoing(self.opened.serving, steps, self.codec()) if steps else []
        out, err = self.out.take(), self.err.take()
        self.send_logs()
        cap = childio.redirected(self.out, self.err) if op == "call" else 0
        self.send(
            protocol.Op(
                ref=ref,
                op=op,
                args=payload,
                out=out,
                err=err,
                shared=shared or [],
                capture=cap,
                thread=None if ref == world.REF else self.asker(),
                running=moving,
            )
        )
        frame = opened.Frame(codec.memo, codec.ids)
        if ref != world.REF:  # as the verifier serves it
            self.opened.asked.append(frame)
        try:
            msg = self._reply()
        finally:
            if ref != world.REF:
                self.opened.asked.remove(frame)
        childio.write_back(cap, msg)
        value = codec.decode(msg.value)
        for n, tree in msg.writeback:
            if n < sent:
                codec.refill(codec.memo[n], tree)
        if msg.shared:
            self.kept.apply(msg.shared)
        if steps:
            running.take_answer(self.opened.serving, steps, msg.running, self.codec())
        if msg.kept:  # the test's code holds them on: so do we
            self.kept.take(msg.kept, codec.memo)
        if not msg.ok:
            raise value
        return value

    def asker(self) -> list[Any] | None:
        """The asking thread, when it is one of the candidate's own rather
        than the one serving the verifier: the test's code runs on a thread
        standing for it (`strict.lanes`)."""
        ident = _ident()
        return None if ident == self.home else [ident, _current().name]

    def _reply(self) -> Any:
        """The verifier's reply, serving its requests until it comes."""
        while True:
            msg = self.receive()
            if msg is None:
                done()
            if _type(msg) is not protocol.Op:
                return msg
            self.serve(msg)

    def _keep_fields(self, tree: object) -> list[int]:
        """Hold the fields the verifier names (`lent`): each one's number in
        the kept table, or -1."""
        try:
            pairs = self.codec().decode(tree)
        except _BaseException:
            return []
        out = []
        for pair in pairs if _type(pairs) is list else ():
            try:
                owner, name = pair
                out.append(lent.keep_field(self.kept, owner, name))
            except _BaseException:
                out.append(-1)
        return out

    def _settle(self) -> None:
        """Join the test's containers read as fields that the candidate's
        code changed or still holds to the test's objects' own (`lent`),
        before the test's code runs."""
        self.fields.lent.settle(self.kept, self._join, self.fields.known.values())

    def _join(self, pairs: list[list[Any]]) -> list[int]:
        got = self._ask(world.REF, "keepfield", pairs)
        return got if _type(got) is list else []

    def _share(self, op: protocol.Op) -> protocol.Reply:
        """The verifier's side of `kept` (see `kept.serve`)."""
        try:
            found, shared = kept.serve(self.kept, op.op, op.args, self.scope)
        except _BaseException as exc:
            return protocol.Reply(ok=False, value=self._raised(exc))
        return protocol.Reply(ok=True, value=found, shared=shared)

    def _performed(
        self, op: protocol.Op, args: Any, codec: wire.Codec, snaps: list[object] | None = None
    ) -> Any:
        """`perform`, with the request open (`opened`) while the candidate's
        code runs: a container it was sent that it hands on to the test's
        code is the test's own there."""
        if self.streaming:
            return self.perform(op, args)
        frame = opened.Frame(codec.memo, codec.ids, snaps)
        self.opened.serving.append(frame)
        try:
            return self.perform(op, args)
        finally:
            self.opened.serving.remove(frame)


flush = childio.flush


def done() -> NoReturn:
    """The verifier hung up: end the child."""
    flush()
    _exit(0)
