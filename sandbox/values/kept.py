"""Containers of the test's that the candidate's code keeps past the call
they came with (a list stored on an object): one object in one program,
a copy on each side here, kept alike.

`wire`'s write-back hands back what a call does to its arguments. A copy
the candidate's code keeps goes on changing after the call: a later call
appends to it, or the test changes its own list and the candidate reads
it. After each call the child keeps (`Kept.keep`) the arguments whose
reference count shows its code holds them (none of the cost for the ones
it drops) and tells the verifier which, under a key; each side then
watches its copy, and before its next message that lets the other side's
code run sends the ones that changed (the ``kept`` op, `drifted`), which
the other side puts into its own copy in place (`put`). Contents cross as
values; a container inside a kept one crosses as a fresh copy.
"""

from __future__ import annotations

import sys
from typing import Any

from . import wire
from .watched import CONTAINERS

MOST = 4096
"""Items kept alike at most in a check: each is compared at every message
(about 25 ns an item, so 0.1 ms a message at most); a larger container
is not kept alike."""
_BASE = 3
"""References to an argument that are `keep`'s own: its list, its loop
variable and ``sys.getrefcount``'s argument."""
_type = type
_id = id
_len = len
_refs = sys.getrefcount


class Kept:
    """One side's copies of the containers kept alike, by key, with what
    each held when the two sides last agreed."""

    def __init__(self) -> None:
        self.items: dict[int, tuple[Any, object]] = {}
        self.size = 0

    def hold(self, key: int, obj: Any) -> bool:
        """Keep ``obj`` alike with the other side's copy under ``key``."""
        if _type(obj) not in CONTAINERS or key in self.items:
            return False
        if self.size + _len(obj) > MOST:
            return False
        self.size += _len(obj)
        self.items[key] = (obj, wire.snapshot([obj])[0])
        return True

    def keep(self, given: list[Any]) -> list[list[int]]:
        """In the child, after a call: ``[n, key]`` of each of the call's
        arguments (``given``, by number; the containers the test passed,
        now held only here unless the candidate's code kept them) that the
        candidate's code kept."""
        inner: dict[int, int] = {}
        for c in given:
            for x in _members(c):
                inner[_id(x)] = inner.get(_id(x), 0) + 1
        out: list[list[int]] = []
        for n, c in enumerate(given):
            if _type(c) not in CONTAINERS:
                continue
            if _refs(c) > _BASE + inner.get(_id(c), 0) and self.hold(_id(c), c):
                out.append([n, _id(c)])
        given.clear()
        return out

    def drifted(self) -> list[list[Any]]:
        """``[key, container]`` of each copy changed since the sides last
        agreed (they agree again once it is sent)."""
        out: list[list[Any]] = []
        for key, (obj, snap) in self.items.items():
            if wire.changed([obj], [snap]):
                out.append([key, obj])
        for key, obj in out:
            self.items[key] = (obj, wire.snapshot([obj])[0])
        return out

    def put(self, pairs: Any) -> None:
        """Take the other side's changed copies (``[key, contents]`` each)."""
        if _type(pairs) is not list:
            raise wire.NotData("malformed kept containers")
        for pair in pairs:
            if _type(pair) is not list or _len(pair) != 2 or _type(pair[0]) is not int:
                raise wire.NotData("malformed kept containers")
            if pair[0] not in self.items:
                raise wire.NotData("an unknown kept container")
            obj = self.items[pair[0]][0]
            wire.put(obj, pair[1])
            self.items[pair[0]] = (obj, wire.snapshot([obj])[0])


def _members(c: Any) -> list[Any]:
    if _type(c) not in CONTAINERS or _type(c) is bytearray:
        return []  # a float the codec numbers (a NaN), or bytes
    if isinstance(c, dict):
        return [x for pair in c.items() for x in pair]
    return list(c)
