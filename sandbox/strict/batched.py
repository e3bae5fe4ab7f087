"""Attributes of the candidate's objects, read in batches and kept until
the candidate's code may have run again.

A walk through a linked structure of the child's reads one object after
another; asked one at a time, each is a round trip. So the first read of
an object brings what the child's op (``fields``: public data attributes,
``states``: all of them) gives for it and for the objects it reaches,
breadth first (`values.fieldsof`), 16 objects, then twice as many on each
next read up to 4,096, and these answer reads until the session's epoch
moves (any request that may run the candidate's code). Each request names
the epoch, and the child leaves out (and does not walk through) what it
gave since that epoch began, which the verifier still keeps.
"""

from __future__ import annotations

from typing import Any

from ..values import fieldsof
from .handles import is_handle


class Batched:
    """One kind of read (the child's op ``op``) of a session's objects."""

    def __init__(self, op: str) -> None:
        self.op = op
        self.epoch = -1
        self.size = fieldsof.FIRST
        self.known: dict[int, dict[str, Any]] = {}

    def get(self, session: Any, hid: int) -> dict[str, Any] | None:
        """What the op gives for the child's object ``hid`` (None if
        nothing: not an object the op reads)."""
        if self.epoch != session.epoch:
            self.known.clear()
            self.epoch, self.size = session.epoch, fieldsof.FIRST
        found = self.known.get(hid)
        if found is None:
            got = session.ask(hid, self.op, [self.size, self.epoch])
            self.size = min(self.size * 2, fieldsof.MOST)
            for item in got[: fieldsof.MOST] if type(got) is list else ():
                if type(item) is list and len(item) == 2 and type(item[1]) is dict:
                    if is_handle(item[0]) and item[0]._session is session:
                        self.known.setdefault(item[0]._hid, item[1])
            found = self.known.get(hid)
        return found
