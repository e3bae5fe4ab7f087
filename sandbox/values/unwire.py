"""The decoding half of a strict job's value channel (see `wire`): trees
from the other side, made into fresh objects of exact, trusted types.

`Decoding` is `wire.Codec`'s decoder (a mixin: the codec keeps the
exchange's numbered containers, ``memo``, and the ``refer`` hook that makes
a reference into the side's own object). It trusts nothing: every node is
checked for its shape, and size and depth are bounded.
"""

from __future__ import annotations

import collections
import decimal
import fractions
from collections.abc import Callable
from typing import Any

from . import stdvalues
from .opened import Opened

NotData = stdvalues.NotData
check_hashes = stdvalues.check_hashes
MAX_DEPTH = stdvalues.MAX_DEPTH
MAX_INT_BITS = stdvalues.MAX_INT_BITS
MAX_NODES = stdvalues.MAX_NODES
PLAIN = frozenset({bool, int, float, str, bytes, type(None)})
"""What a tree holds as itself."""
FACTORIES: dict[str, Any] = {
    "list": list,
    "dict": dict,
    "set": set,
    "int": int,
    "float": float,
    "str": str,
    "tuple": tuple,
    "bool": bool,
}
"""A defaultdict's factories that cross by name (any other crosses as a
value or reference of its own)."""
_type = type
_len = len
_id = id
_od_setitem = collections.OrderedDict.__setitem__
DEQUE = _deque = collections.deque
COUNTER = _Counter = collections.Counter
ORDERED = _OrderedDict = collections.OrderedDict
DEFAULTDICT = _defaultdict = collections.defaultdict
DECIMAL = _Decimal = decimal.Decimal
FRACTION = _Fraction = fractions.Fraction
"""The standard container and number types, bound at import (both halves
of the codec use these)."""


class Decoding:
    """The decoder of one side's `wire.Codec`."""

    memo: list[Any]
    ids: dict[int, int]
    count: int
    unnumbered: bool
    refer: Callable[[list[Any]], object]
    opened: Opened | None

    def decode(self, t: Any, depth: int = 0) -> Any:
        self.count += 1
        if depth > MAX_DEPTH or self.count > MAX_NODES:
            raise NotData("value too large or too deeply nested")
        if _type(t) in PLAIN:
            return t
        return self._node(t, depth)

    def _items(self, body: list[Any], depth: int) -> list[Any]:
        """The decoded items of a sequence node: plain values as they are
        (counted as `decode` counts them), the rest through `decode`."""
        if not body:
            return []
        self.count += _len(body)
        if depth >= MAX_DEPTH or self.count > MAX_NODES:
            raise NotData("value too large or too deeply nested")
        return [x if _type(x) in PLAIN else self._node(x, depth + 1) for x in body]

    def _node(self, t: Any, depth: int) -> Any:
        if _type(t) is not list:
            raise NotData(f"unexpected {_type(t).__name__} in a value")
        if _len(t) < 2 or _type(t[0]) is not str:
            raise NotData("malformed value")
        tag = t[0]
        if tag == "t" and _len(t) == 2 and _type(t[1]) is list:  # a call's arguments
            return tuple(self._items(t[1], depth))
        if tag == "@":
            n = t[1]
            if _type(n) is not int or not 0 <= n < _len(self.memo):
                raise NotData("reference to an unknown container")
            return self.memo[n]
        if tag in ("h", "v", "e", "k"):
            return self.refer(t)
        if tag == "o":
            return self._own(t, depth)
        if tag == "x":
            return self._standard(t, depth)
        return self._builtin(tag, t, depth)

    def _builtin(self, tag: str, t: list[Any], depth: int) -> Any:
        body = t[1]
        if tag == "i" and _type(body) is bytes:
            if _len(body) * 8 > MAX_INT_BITS + 8:
                raise NotData(f"int of more than {MAX_INT_BITS} bits")
            return int.from_bytes(body, "little", signed=True)
        if tag == "F" and _type(body) is str and body in ("nan", "-nan"):
            return self._numbered(float(body))
        if tag == "u" and _type(body) is bytes:  # see `protocol.encode_frame`
            return stdvalues.surrogate_text(body)
        if tag == "c" and _len(t) == 3:
            return complex(_number(t[1]), _number(t[2]))
        if tag == "r" and _len(t) == 4 and all(_type(x) is int for x in t[1:]):
            r = range(t[1], t[2], t[3])
            if _len(r) > MAX_NODES:
                raise NotData("range too long")
            return r
        if tag == "b" and _type(body) is bytes:
            return self._numbered(bytearray(body))
        if _type(body) is not list or _len(t) != 2:
            raise NotData("malformed container")
        if tag == "t":
            return tuple(self._items(body, depth))
        if tag == "f":
            return frozenset(check_hashes(self._items(body, depth)))
        if tag == "l":
            out: list[Any] = self._numbered([])
            out.extend(self._items(body, depth))
            return out
        if tag == "s":
            s: set[Any] = self._numbered(set())
            s.update(check_hashes(self._items(body, depth)))
            return s
        if tag == "d":
            return self._fill(self._numbered({}), body, depth)
        raise NotData(f"unknown tag {tag!r}")

    def _standard(self, t: list[Any], depth: int) -> Any:
        kind = t[1]
        if kind == "Decimal" and _len(t) == 3 and _type(t[2]) is str and _len(t[2]) < 10_000:
            try:
                return _Decimal(t[2])
            except decimal.InvalidOperation:
                raise NotData("malformed Decimal") from None
        if kind == "Fraction" and _len(t) == 4:
            num, den = self.decode(t[2], depth + 1), self.decode(t[3], depth + 1)
            if _type(num) is not int or _type(den) is not int or den <= 0:
                raise NotData("malformed Fraction")
            return _Fraction(num, den)
        if kind == "deque" and _len(t) == 4 and _type(t[2]) is list:
            maxlen = t[3]
            if maxlen is not None and (_type(maxlen) is not int or maxlen < 0):
                raise NotData("malformed deque")
            d: collections.deque[Any] = self._numbered(_deque(maxlen=maxlen))
            d.extend(self.decode(x, depth + 1) for x in t[2])
            return d
        if kind in ("Counter", "OrderedDict") and _len(t) == 3 and _type(t[2]) is list:
            made: Any = _Counter() if kind == "Counter" else _OrderedDict()
            return self._fill(self._numbered(made), t[2], depth)
        if kind == "defaultdict" and _len(t) == 4 and _type(t[3]) is list:
            made = _defaultdict(self._factory(t[2], depth))
            return self._fill(self._numbered(made), t[3], depth)
        if (
            kind == "type"
            and _len(t) == 3
            and _type(t[2]) is str
            and t[2] in stdvalues.BUILTIN_TYPES
        ):
            return stdvalues.BUILTIN_TYPES[t[2]]
        if kind in ("np", "nd") or kind in stdvalues.STANDARD_KINDS:
            build = stdvalues.numpy_value if kind in ("np", "nd") else stdvalues.standard_value
            try:
                return build(t, self, depth)
            except (NotData, MemoryError):
                raise
            except Exception:  # the other side's tree, not a value this side can build
                raise NotData(f"malformed {kind[:40]} value") from None
        if kind in ("keys", "values", "items") and _len(t) == 3 and _type(t[2]) is list:
            if kind == "values":
                return {i: self.decode(x, depth + 1) for i, x in enumerate(t[2])}.values()
            if kind == "keys":
                return dict.fromkeys(check_hashes([self.decode(x, depth + 1) for x in t[2]])).keys()
            return self._fill({}, t[2], depth).items()
        raise NotData("malformed standard value")

    def _factory(self, t: Any, depth: int) -> Any:
        """A defaultdict's factory: a builtin by name, else a reference
        (the other side's function or class, called there)."""
        if t is None or (_type(t) is str and t in FACTORIES):
            return None if t is None else FACTORIES[t]
        if _type(t) is list and t[:1] in (["h"], ["v"]):
            made = self.decode(t, depth + 1)
            if callable(made):
                return made
        raise NotData("malformed defaultdict")

    def _own(self, t: list[Any], depth: int) -> Any:
        """This side's container of a request still open that the other
        side's copy stands for (`opened`), refilled with what the copy holds
        now and numbered in this exchange as the sender numbered it."""
        if self.opened is None or _len(t) != 4 or _type(t[3]) is not list:
            raise NotData("malformed open container")
        try:
            target = self.opened.own(t[1], t[2], MUTABLE)
        except LookupError as exc:
            raise NotData(str(exc)) from None
        self.ids[_id(target)] = _len(self.memo)
        self.memo.append(target)
        saved, self.unnumbered = self.unnumbered, True
        try:
            fill(target, self._node(t[3], depth + 1))
        finally:
            self.unnumbered = saved
        return target

    def _numbered(self, container: Any) -> Any:
        if self.unnumbered:  # the top of a written-back node: it has a number
            self.unnumbered = False
            return container
        self.ids[_id(container)] = _len(self.memo)
        self.memo.append(container)
        return container

    def _fill(self, target: Any, pairs: Any, depth: int) -> Any:
        if _type(pairs) is not list:
            raise NotData("malformed mapping")
        keys, values = [], []
        for pair in pairs:
            if _type(pair) is not list or _len(pair) != 2:
                raise NotData("malformed mapping item")
            keys.append(self.decode(pair[0], depth + 1))
            values.append(self.decode(pair[1], depth + 1))
        put = _od_setitem if _type(target) is _OrderedDict else dict.__setitem__
        for k, v in zip(check_hashes(keys), values, strict=True):
            put(target, k, v)
        return target


MUTABLE = frozenset({list, dict, set, bytearray, DEQUE, COUNTER, ORDERED, DEFAULTDICT})
"""The containers an exchange numbers (`wire.MUTABLE`)."""


def fill(target: Any, fresh: Any) -> None:
    """Make ``target`` (a numbered container) hold what ``fresh`` holds, in
    place: it keeps its identity and type."""
    if _type(fresh) is not _type(target) or _type(target) is float:
        raise NotData("a written-back value changed its type")
    if _type(target) is list or _type(target) is bytearray:
        target[:] = fresh
    elif _type(target) is _deque:
        target.clear()
        target.extend(fresh)
    else:
        target.clear()
        target.update(fresh)


def _number(x: Any) -> float:
    if _type(x) is float or _type(x) is int:
        return float(x)
    raise NotData("malformed complex")
