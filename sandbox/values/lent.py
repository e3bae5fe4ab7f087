"""Containers one side read as fields of the other's objects, joined to
the objects' own where the reader changed or kept them.

A batched read of the fields of the other side's objects (the verifier's
`strict.batched`, the child's `process.fields`) gives the reader copies of
the lists, dicts and sets those objects hold. In one program they are the
objects' own: a test that keeps ``ea = ledger.entries`` sees what the
candidate's code appends to it later, and a candidate that sorts
``order.prices`` in place sorts the test's list. So each copy handed to the
reader's code is remembered with what it held, until the owner's code may
run again; then a copy the reader changed, or still holds (more references
to it than the reading machinery's own), is joined to the object's own:
both sides hold the pair from then on (`kept`), and what the reader changed
is written into the owner's container before the owner's code runs.

Imports only the standard library and `fieldsof`, `kept`, `wire`.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from . import fieldsof, kept, unwire, wire

MOST = 4096
"""Copies remembered at once (a walk reading more changes none of them,
or the check says so when its result comes back different)."""

_getrefcount = sys.getrefcount
_ALONE = 4
"""References to a copy held only by the reading machinery, as `_held`
counts them besides the field caches: the remembered entry, the loop's
name, `_held`'s argument and `sys.getrefcount`'s."""


class Lent:
    """One side's copies of the other side's containers read as fields
    since the other side's code last ran."""

    def __init__(self) -> None:
        self.lent: list[tuple[Any, str, Any, object]] = []
        self.ids: set[int] = set()

    def lend(self, owner: Any, name: str, value: Any) -> None:
        """``value`` (the field ``name`` of ``owner``, the other side's
        object) went to this side's code."""
        if type(value) in wire.MUTABLE and id(value) not in self.ids and len(self.lent) < MOST:
            self.ids.add(id(value))
            self.lent.append((owner, name, value, wire.snapshot([value])[0]))

    def settle(
        self,
        table: kept.Kept,
        join: Callable[[list[list[Any]]], list[int]],
        caches: Iterable[dict[str, Any]],
    ) -> bool:
        """Join each copy this side's code changed or still holds to its
        object's container (``join`` asks the owner to hold them: each
        one's number in the owner's table, or -1), then forget them all:
        the owner's code is about to run. ``caches`` are the field reads'
        own dicts, whose references to a copy are not the reader's. False
        if the table was full."""
        if not self.lent:
            return True
        cached = Counter(id(v) for fields in caches for v in fields.values())
        pairs: list[list[Any]] = []
        copies: list[tuple[Any, object]] = []
        for owner, name, value, snap in self.lent:
            if wire.changed([value], [snap]) or _held(value, cached):
                pairs.append([owner, name])
                copies.append((value, snap))
        self.lent.clear()
        self.ids.clear()
        if not pairs:
            return True
        fitted = True
        for (value, snap), n in zip(copies, join(pairs), strict=False):
            if n == len(table.objects):  # the owner holds it as a new one
                table.add(value)
                table.snaps[-1] = snap  # as both last agreed: the change is sent
            elif 0 <= n < len(table.objects):  # one both already hold
                if table.objects[n] is not value:
                    unwire.fill(table.objects[n], value)
            else:
                fitted = False
        return fitted


def _held(value: Any, cached: Counter[int]) -> bool:
    return _getrefcount(value) > _ALONE + cached[id(value)]


def keep_field(table: kept.Kept, owner: Any, name: object) -> int:
    """The owner's side of `Lent.settle`: hold ``owner``'s field ``name``
    (a list, dict or set among the public instance attributes a read of
    its fields gives) with the reader's copy. Its number in the table, or
    -1 (not such a field, or the table full)."""
    if type(name) is not str or name.startswith("_") or not fieldsof.plain(owner):
        return -1  # only what a read of the fields gives (`fieldsof.fields_of`)
    if hasattr(type(owner), name):
        return -1
    value = owner.__dict__.get(name)
    n = table.index.get(id(value))
    if n is not None:
        return n
    if type(value) in wire.MUTABLE and table.add(value):
        return len(table.objects) - 1
    return -1
