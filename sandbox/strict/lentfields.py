"""Containers the test read from the candidate's objects and then changed.

A read of a field of the candidate's object (`batched`) gives the test a
copy of a list, dict or set the object holds. In one program it is the
object's own: a test that builds a tree by ``node.children.append(child)``
changes the candidate's tree. So each such copy handed to the test is
remembered with what it held, until the candidate's code may run again;
before the next request that may run it, a copy the test changed is
joined to the object's own (the child's ``keepfield``): both sides hold
the pair from then on (`values.kept`), and what the test changed is
written into the object's container before the candidate's code runs.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from ..values import kept, wire

MOST = 4096
"""Copies remembered at once (a walk reading more changes none of them,
or the check says so when its result comes back different)."""


class LentFields:
    """The verifier's copies of the child's containers read as fields since
    the candidate's code last ran."""

    def __init__(self) -> None:
        self.lent: list[tuple[Any, str, Any, object]] = []
        self.ids: set[int] = set()

    def lend(self, handle: Any, name: str, value: Any) -> None:
        """``value`` (the field ``name`` of ``handle``) went to the test."""
        if type(value) in wire.MUTABLE and id(value) not in self.ids and len(self.lent) < MOST:
            self.ids.add(id(value))
            self.lent.append((handle, name, value, wire.snapshot([value])[0]))

    def settle(self, table: kept.Kept, join: Callable[[Any, str], int]) -> bool:
        """Join each copy the test changed to its object's container
        (``join`` asks the child to hold it: its number in the child's
        table, or -1), then forget them all: the candidate's code is about
        to run. False if the table was full."""
        fitted = True
        for handle, name, value, snap in self.lent:
            if not wire.changed([value], [snap]):
                continue
            n = join(handle, name)
            if n == len(table.objects):  # the child holds it as a new one
                table.add(value)
                table.snaps[-1] = snap  # as both last agreed: the change is sent
            elif 0 <= n < len(table.objects):  # one both already hold
                _refill(table.objects[n], value)
            else:
                fitted = False
        self.lent.clear()
        self.ids.clear()
        return fitted


def _refill(target: Any, value: Any) -> None:
    if type(target) is not type(value):
        return
    if type(target) in (list, bytearray):
        target[:] = value
    elif type(target) is collections.deque:
        target.clear()
        target.extend(value)
    else:
        target.clear()
        target.update(value)
