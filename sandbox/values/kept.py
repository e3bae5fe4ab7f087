"""Containers both sides hold across requests: one program's aliasing.

In one program a list the test passes and the candidate keeps
(``self.items = items``), or one the candidate returns while it keeps it
(``return self.items``), is one object: what either side's code does to it
later, the other side sees. On the channel each request's containers are
fresh copies (`wire`), written back only for that request. So after each
request the child names the request's containers its side still holds
(`held`), both sides put them in a `Kept` table of the same numbering, and
before the other side's code runs again each side sends what changed in
its table since (`Kept.changes`) for the other to refill (`Kept.apply`).
A prompt's module-level container that the test names is kept from the
start: the test's and the program's are one object in one program.

Imports only the standard library and `wire`.
"""

from __future__ import annotations

import collections
import itertools
import operator
import sys
from collections.abc import Callable
from typing import Any

from . import wire

MAX_KEPT = 1024
"""Containers a check keeps in sync at most: each costs a comparison per
request on both sides. One past it fails the check with a named reason in
the verifier, never left out in silence."""

IN_STEP = 4096
"""Items in all of the kept containers up to which they are also brought
in step at each callback (`Kept.changes_in_call`): comparing them costs
about 20 ns an item on each side, under half a callback's round trip."""

ANSWERS = frozenset({"call", "getattr", "getitem", "next"})
"""Requests whose answer is the asker's own value: a container in it that
the answering side's code also holds is shared. What a ``build``, a
``state`` or a ``fields`` read reports of an object is not (the asker reads
it through the object's handle or proxy)."""

_getrefcount = sys.getrefcount
_type = type
_id = id
_len = len
_MUTABLE = frozenset(wire.MUTABLE)


class Kept:
    """One side's held containers, numbered as the other side's are, with
    what each held when the two sides last agreed. ``codec`` makes that
    side's codec on a given memo: the table's exchanges start with the
    table as their memo, so a kept container inside another is named, not
    copied."""

    def __init__(self, codec: Callable[[list[Any]], wire.Codec]) -> None:
        self.codec = codec
        self.objects: list[Any] = []
        self.snaps: list[object] = []
        self.index: dict[int, int] = {}
        """Each held container's number, by identity (see `wire.Codec.held`)."""
        self.full = False
        """A container that crossed inside a kept one did not fit."""
        self.clashed = False
        """The other side changed a container this side had changed too
        since they last agreed (not brought in step at a callback: see
        `changes_in_call`); the verifier refuses."""

    def add(self, obj: Any) -> bool:
        """Keep ``obj`` in sync from now on; false (and left out) past
        `MAX_KEPT`, which both sides apply alike, the verifier refusing."""
        if _len(self.objects) >= MAX_KEPT:
            return False
        self.index[_id(obj)] = _len(self.objects)
        self.objects.append(obj)
        self.snaps.extend(wire.snapshot([obj]))
        return True

    def take(self, numbers: list[int], memo: list[Any]) -> bool:
        """Keep the request's containers ``numbers`` names (of ``memo``, the
        request's codec's, as `held` found them) from now on; false if some
        did not fit (see `add`). Raises `wire.NotData` on a number that names
        no container of the request."""
        fitted = True
        for n in numbers:
            if _type(n) is not int or not 0 <= n < _len(memo) or _type(memo[n]) not in _MUTABLE:
                raise wire.NotData("an unknown container to keep")
            fitted = self.add(memo[n]) and fitted
        return fitted

    def get(self, t: list[Any]) -> Any:
        """The held container ``["k", n]`` names; `wire.NotData` if none."""
        if _len(t) != 2 or _type(t[1]) is not int or not 0 <= t[1] < _len(self.objects):
            raise wire.NotData("an unknown kept container")
        return self.objects[t[1]]

    def changes(self) -> list[Any]:
        """``[k, contents]`` of each kept container changed since the sides
        last agreed."""
        if not self.objects:
            return []
        numbers = wire.changed(self.objects, self.snaps)
        if not numbers:
            return []
        out = self.contents(numbers, grown=True)
        self._resnap(numbers)
        return out

    def changes_in_call(self) -> list[Any]:
        """`changes`, at a callback inside a call: while the kept
        containers hold at most `IN_STEP` items in all (past it, each call
        would pay for them at each of its callbacks; they are in step at
        the call's start and end only)."""
        if not self.objects or _sum(_map(_len, self.objects)) > IN_STEP:
            return []
        return self.changes()

    def contents(self, numbers: Any, grown: bool = False) -> list[Any]:
        """``[k, contents]`` of the kept containers ``numbers``, for the
        other side to `apply`; with ``grown``, a list that only grew at its
        end since the sides last agreed sends its new items alone
        (``["+", length before, items]``): an audit trail appended to at
        each of thousands of calls costs each call its new entry, not the
        whole list again."""
        codec = self.codec(list(self.objects))
        out = []
        for k in numbers:
            obj = self.objects[k]
            start = _appended(obj, self.snaps[k]) if grown else 0
            if start:
                out.append([k, ["+", start, codec.contents(obj[start:], 0)]])
            else:
                out.append([k, codec.contents(obj, 0)])
        self._adopt(codec.memo)
        return out

    def apply(self, items: object) -> None:
        """Refill the kept containers ``items`` names (see `changes`);
        raises `wire.NotData` on anything malformed."""
        if _type(items) is not list:
            raise wire.NotData("malformed kept containers")
        codec = self.codec(list(self.objects))
        for item in items:
            if _type(item) is not list or _len(item) != 2 or _type(item[0]) is not int:
                raise wire.NotData("malformed kept containers")
            if not 0 <= item[0] < _len(self.objects):
                raise wire.NotData("an unknown kept container")
            target = self.objects[item[0]]
            clash = bool(wire.changed([target], [self.snaps[item[0]]]))
            self.clashed = self.clashed or clash
            if _type(item[1]) is list and _len(item[1]) == 3 and item[1][0] == "+":
                if not clash:  # else the verifier refuses: no length to add to
                    _extend(codec, target, item[1])
            else:
                codec.refill(target, item[1])
        self._adopt(codec.memo)
        self._resnap([item[0] for item in items])

    def _resnap(self, numbers: list[int]) -> None:
        """What the containers ``numbers`` hold now is what the sides agree
        on (the others are unchanged; those adopted since have theirs)."""
        for k in numbers:
            self.snaps[k] = wire.snapshot([self.objects[k]])[0]

    def _adopt(self, memo: list[Any]) -> None:
        """Keep the containers that crossed inside kept ones (a list the
        candidate put into a kept dict): both sides hold them through it
        from now on. ``memo`` numbers them alike on both sides (the table
        first, then what the exchange carried, in the wire's order), so
        both tables grow alike; past `MAX_KEPT` the verifier refuses
        (`full`)."""
        for obj in memo[_len(self.objects) :]:
            if _type(obj) in _MUTABLE and not self.add(obj):
                self.full = True
                return


def _appended(obj: Any, old: Any) -> int:
    """The length ``old`` had when ``obj`` (a list) only grew at its end
    since (its first items are the very objects ``old`` holds); else 0."""
    if _type(obj) is not list or _type(old) is not list:
        return 0
    start = _len(old)
    if not 0 < start < _len(obj) or not _all(_map(_is, old, obj)):
        return 0
    return start


def _extend(codec: wire.Codec, target: Any, grown: list[Any]) -> None:
    """Append to ``target`` the items ``["+", start, items]`` sent, where
    ``start`` must be its length; raises `wire.NotData` otherwise."""
    start = grown[1]
    if _type(target) is not list or _type(start) is not int or start != _len(target):
        raise wire.NotData("malformed kept containers")
    tail: list[Any] = []
    codec.refill(tail, grown[2])
    target.extend(tail)


def serve(table: Kept, op: str, args: object, scope: dict[str, object]) -> tuple[object, list[Any]]:
    """The child's answer to the verifier's ``kept`` request (refill what
    the test changed in the containers both sides hold) or ``keepnames``
    (start holding the program's globals ``args`` names): which names it
    holds, and what they hold, to be refilled on the test's side."""
    if op == "kept":
        table.apply(args)
        return None, []
    start, found = _len(table.objects), []
    for i, name in enumerate(args if _type(args) is list else []):
        obj = scope.get(name) if _type(name) is str else None
        if _type(obj) in _MUTABLE and table.add(obj):
            found.append(i)
    return found, table.contents(range(start, _len(table.objects)))


def counts(memo: list[Any]) -> list[int]:
    """The reference counts of a request's containers before the call."""
    return [_getrefcount(o) for o in memo]


def held(memo: list[Any], before: list[int], table: Kept, answer: bool) -> list[int]:
    """Numbers of the request's containers that something besides the
    request itself still holds once the call returned and its answer was
    encoded: an argument whose count grew (the callee stored it), or a
    container of the answer referenced from outside the answer (the
    callee's own state), where ``answer`` says the answer is the caller's
    own value. References from other containers of the answer
    are the answer's; one from elsewhere that the callee dropped later
    costs a comparison per request, never a wrong verdict. Containers the
    table already holds are left out."""
    last = _len(memo) if answer else _len(before)  # else the arguments alone
    inner: dict[int, int] = _inner(memo) if last > _len(before) else {}
    known = table.index  # the held containers' ids, kept as they are added
    out: list[int] = []
    for n in range(last):
        o = memo[n]
        if _type(o) not in _MUTABLE or _id(o) in known:
            continue
        if n < _len(before):
            if _getrefcount(o) > before[n]:
                out.append(n)
        elif answer and _getrefcount(o) > _ALONE + inner.get(_id(o), 0):
            out.append(n)
    return _within(memo, out, known)


def _within(memo: list[Any], out: list[int], known: dict[int, int]) -> list[int]:
    """``out`` and the request's containers inside them, at any depth: a
    list inside a kept dict is shared through it (``config["words"]``)."""
    number = {_id(o): n for n, o in enumerate(memo)}
    seen = set(out)
    todo = list(out)
    while todo:
        for x in _members(memo[todo.pop()]):
            n = number.get(_id(x))
            if n is not None and n not in seen and _id(x) not in known:
                seen.add(n)
                todo.append(n)
    return sorted(seen)


def _inner(memo: list[Any]) -> dict[int, int]:
    """How many references each container has from the request's
    containers (counted by ``Counter`` over the items' ids, in C; a
    function of its own: its names are gone when `held` reads the
    counts)."""
    return _Counter(_map(_id, _chain(_map(_members, memo))))


_members = wire.members
_Counter = collections.Counter
_chain = itertools.chain.from_iterable
_map = map
_sum = sum
_all = all
_is = operator.is_
_ALONE = 3
"""A container's count held only by a memo list, as `held` reads it: the
memo, the loop's name and `sys.getrefcount`'s argument."""
