"""Containers of exchanges still open: one object while a call runs.

In one program a list the test passes to the candidate is the test's own
list all the while: where the candidate's code hands it on to a function
of the test's (``random.choice(staff)`` patched with a mock that records
its arguments), that function gets the test's list. On the channel the
candidate holds a copy, numbered in the request's exchange (`wire`). So
each side keeps the exchanges it serves (the other side's requests still
being answered) and the ones it asked (its own requests still waiting),
in the same order the other side keeps them the other way round. A
container of a served exchange that crosses again, inside a request of
its own, crosses as ``["o", f, j, contents]``: the receiver's own
container ``j`` of its asked exchange ``f``, filled with what the sender's
copy holds now. It is then numbered in the new exchange like any other, so
what the receiver's code does to it is written back, and a receiver that
keeps it holds it with the sender from then on (`kept`).

Nothing is kept between requests here: a frame lives while its request is
answered. Imports only the standard library.
"""

from __future__ import annotations

from typing import Any

_id = id
_len = len
_type = type


class Frame:
    """One open exchange: its containers, in the wire's numbering, how
    many of them the request itself carried (the rest are its answer's),
    and what they held when the two sides last agreed (``snaps``, by
    number, where they are kept in step at callbacks: `running`)."""

    __slots__ = ("ids", "memo", "sent", "snaps")

    def __init__(self, memo: list[Any], ids: dict[int, int], snaps: Any = None) -> None:
        self.memo = memo
        self.ids = ids
        self.sent = _len(memo)
        self.snaps: list[object] | None = snaps


class Opened:
    """One side's open exchanges: ``serving`` (the other side's requests it
    is answering, whose containers are the other side's) and ``asked`` (its
    own requests the other side is answering)."""

    def __init__(self) -> None:
        self.serving: list[Frame] = []
        self.asked: list[Frame] = []

    def find(self, v: object) -> list[int] | None:
        """``[f, j]`` where ``v`` is container ``j`` the other side sent in
        its request ``f`` still being served, innermost first; else None."""
        key = _id(v)
        frames = self.serving
        for f in range(_len(frames) - 1, -1, -1):
            j = frames[f].ids.get(key)
            if j is not None and j < frames[f].sent:
                return [f, j]
        return None

    def own(self, f: object, j: object, mutable: Any) -> Any:
        """This side's container the other side names ``["o", f, j, ...]``;
        `LookupError` where no open request of this side's has it."""
        if _type(f) is not int or _type(j) is not int or not 0 <= f < _len(self.asked):
            raise LookupError("an unknown open exchange")
        frame = self.asked[f]
        if not 0 <= j < frame.sent or _type(frame.memo[j]) not in mutable:
            raise LookupError("an unknown container of an open exchange")
        return frame.memo[j]
