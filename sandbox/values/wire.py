"""Values on a strict job's channel: data, shared containers, and references.

The verifier and the candidate's child exchange value trees made only of
msgpack scalars and ``[tag, ...]`` lists; the receiving side builds fresh
objects of exact, trusted types from them, so nothing a sender's objects
would do when compared, hashed or printed happens on the receiving side.

Beyond plain data (see `plain`), a tree can say:

- ``["@", n]``: the n-th mutable container (or NaN) of this exchange again.
  Lists, dicts, sets, bytearrays, the mutable standard types and NaNs get
  numbers in the order they are first met, on both sides, so aliasing and
  cycles survive (and ``==`` of containers finds the same NaN, by identity),
  a result that *is* an argument comes back as that same object, and an
  argument's mutations can be written back into the caller's object.
- ``["x", kind, ...]``: a standard type rebuilt by its own constructor
  (deque, Counter, OrderedDict, defaultdict, Decimal, Fraction, numpy
  scalars and arrays), so its exact type is kept: ``numpy.bool_`` stays
  ``numpy.bool_``.
- ``["h", id, flags, base, name]``: an object that stays in the child (an
  instance of the candidate's class, a generator, a function); the verifier
  holds a handle whose calls go back to the child (see `handles`).
- ``["v", id]``: an object that stays in the verifier (a function the test
  passes); the child holds a proxy whose calls come back to the verifier.
- ``["e", type, base, class, args]``: an exception.
- ``["u", bytes]``: a string holding a lone surrogate, which UTF-8 cannot
  carry, as its ``surrogatepass`` bytes (only when a frame would not encode
  otherwise: see `protocol.encode_frame`).

`Codec` does one side's half; what a foreign object becomes, and what a
reference resolves to, is the side's business (its ``foreign`` and ``refer``
hooks). Both sides bound size and depth; the decoder trusts nothing.
Imports only the standard library (numpy lazily, when a tree names it).
"""

from __future__ import annotations

import collections
import decimal
import fractions
from collections.abc import Callable
from typing import Any

from . import stdvalues

MAX_DEPTH = stdvalues.MAX_DEPTH
MAX_INT_BITS = stdvalues.MAX_INT_BITS
MAX_NODES = stdvalues.MAX_NODES
MAX_SAME_HASH = stdvalues.MAX_SAME_HASH
NotData = stdvalues.NotData
check_hashes = stdvalues.check_hashes


_type = type
_len = len
_id = id
_int = int
_float = float
_dict_items = dict.items
_od_items = collections.OrderedDict.items
_od_setitem = collections.OrderedDict.__setitem__
_deque = collections.deque
_Counter = collections.Counter
_OrderedDict = collections.OrderedDict
_defaultdict = collections.defaultdict
_Decimal = decimal.Decimal
_Fraction = fractions.Fraction
_FACTORIES: dict[str, Any] = {
    "list": list,
    "dict": dict,
    "set": set,
    "int": int,
    "float": float,
    "str": str,
    "tuple": tuple,
    "bool": bool,
}
_FACTORY_NAMES = {id(v): k for k, v in _FACTORIES.items()}
PLAIN = frozenset({bool, int, float, str, bytes, type(None)})
"""What a tree holds as itself."""
SELF = frozenset({bool, str, bytes, type(None)})
"""What is its own tree whatever its value (an int or a float may not be)."""
MUTABLE = (list, dict, set, bytearray, _deque, _Counter, _OrderedDict, _defaultdict)
"""Containers that get a number in an exchange (and can be written back)."""
AS_BASE = stdvalues.AS_BASE


def _int_bytes(v: int) -> bytes:
    return v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)


class Codec:
    """One side's encoder and decoder for one exchange (a call and its reply).

    ``memo`` holds the mutable containers numbered so far, in order; the
    same list serves both directions of one exchange, so a reply can name
    the arguments it was sent.
    """

    def __init__(
        self,
        foreign: Callable[[object], object],
        refer: Callable[[list[Any]], object],
        memo: list[Any] | None = None,
    ) -> None:
        self.foreign = foreign
        self.refer = refer
        self.memo: list[Any] = [] if memo is None else memo
        self.ids: dict[int, int] = {_id(o): i for i, o in enumerate(memo)} if memo else {}
        self.count = 0
        self.unnumbered = False

    # --- encoding (values this side owns) ----------------------------------

    def encode(self, v: object, depth: int = 0) -> object:
        self.count += 1
        if self.count > MAX_NODES or depth > MAX_DEPTH:
            raise NotData("value too large or too deeply nested")
        return self._tree(v, depth)

    def _encoded(self, v: Any, depth: int) -> list[object]:
        """The trees of a sequence's items: strings, small ints and the
        like as themselves (counted as `encode` counts them), the rest
        through `encode`."""
        if not v:
            return []
        self.count += _len(v)
        if self.count > MAX_NODES or depth >= MAX_DEPTH:
            raise NotData("value too large or too deeply nested")
        return [
            x
            if _type(x) in SELF or (_type(x) is _int and -(2**63) <= x < 2**63)
            else self._tree(x, depth + 1)
            for x in v
        ]

    def _tree(self, v: object, depth: int) -> object:
        t = _type(v)
        if t is bool or t is str or t is bytes or v is None:
            return v
        if t is _int:
            if -(2**63) <= v < 2**63:  # type: ignore[operator]
                return v
            if v.bit_length() > MAX_INT_BITS:  # type: ignore[attr-defined]
                raise NotData(f"int of more than {MAX_INT_BITS} bits")
            return ["i", _int_bytes(v)]  # type: ignore[arg-type]
        if t is _float:  # a NaN is numbered: containers find it by identity
            return v if v == v else (self._seen(v) or ["F", "nan"])
        if t is complex:
            return ["c", v.real, v.imag]  # type: ignore[attr-defined]
        if t is tuple:
            return ["t", self._encoded(v, depth)]
        if t is frozenset:
            return ["f", [self.encode(x, depth + 1) for x in v]]  # type: ignore[attr-defined]
        if t is range:
            return ["r", v.start, v.stop, v.step]  # type: ignore[attr-defined]
        if t in MUTABLE:
            seen = self._seen(v)
            return self.contents(v, depth) if seen is None else seen
        if t is _Decimal:
            return ["x", "Decimal", str(v)]
        if t is _Fraction:
            return ["x", "Fraction", self.encode(v.numerator), self.encode(v.denominator)]  # type: ignore[attr-defined]
        if t in stdvalues.STANDARD:
            tree = stdvalues.standard_tree(v, t, self, depth)
            if tree is not None:
                return tree
        if t in _VIEWS:
            return self._view(v, t, depth)
        np = stdvalues.numpy_of(t)
        if np is not None:
            tree = stdvalues.numpy_tree(np, v, t, self, depth)
            if tree is not None:
                return tree
        if t is _type and _id(v) in stdvalues.TYPE_NAMES:
            return ["x", "type", stdvalues.TYPE_NAMES[_id(v)]]
        return self.foreign(v)

    def _seen(self, v: object) -> list[object] | None:
        """``["@", n]`` if ``v`` has a number in this exchange, else None
        (and ``v`` takes the next number)."""
        n = self.ids.get(_id(v))
        if n is not None:
            return ["@", n]
        self.ids[_id(v)] = _len(self.memo)
        self.memo.append(v)
        return None

    def _view(self, v: Any, t: type, depth: int) -> object:
        kind = _VIEWS[t]
        if kind == "items":
            items = [[self.encode(k, depth + 1), self.encode(x, depth + 1)] for k, x in v]
            return ["x", kind, items]
        return ["x", kind, [self.encode(x, depth + 1) for x in v]]

    def contents(self, v: Any, depth: int) -> object:
        """The full node of a numbered container (its current contents)."""
        t = _type(v)
        if t is list:
            return ["l", self._encoded(v, depth)]
        if t is dict:
            return ["d", self._pairs(v, depth)]
        if t is set:
            return ["s", [self.encode(x, depth + 1) for x in v]]
        if t is bytearray:
            return ["b", bytes(v)]
        if t is _deque:
            return ["x", "deque", [self.encode(x, depth + 1) for x in v], v.maxlen]
        if t is _Counter or t is _OrderedDict:
            return ["x", t.__name__, self._pairs(v, depth)]
        if t is _defaultdict:
            name = _FACTORY_NAMES.get(_id(v.default_factory))
            if v.default_factory is not None and name is None:
                return self.foreign(v)
            return ["x", "defaultdict", name, self._pairs(v, depth)]
        raise NotData(f"not a container: {t.__name__}")

    def _pairs(self, v: Any, depth: int) -> list[object]:
        return [[self.encode(k, depth + 1), self.encode(x, depth + 1)] for k, x in _items(v)]

    # --- decoding (trees from the other side) -------------------------------

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
        if tag in ("h", "v", "e"):
            return self.refer(t)
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
            factory = t[2]
            if factory is not None and factory not in _FACTORIES:
                raise NotData("malformed defaultdict")
            made = _defaultdict(None if factory is None else _FACTORIES[factory])
            return self._fill(self._numbered(made), t[3], depth)
        if (
            kind == "type"
            and _len(t) == 3
            and _type(t[2]) is str
            and t[2] in stdvalues.BUILTIN_TYPES
        ):
            return stdvalues.BUILTIN_TYPES[t[2]]
        if kind in ("np", "nd"):
            return stdvalues.numpy_value(t, self, depth)
        if kind in stdvalues.STANDARD_KINDS:
            return stdvalues.standard_value(t, self, depth)
        if kind in ("keys", "values", "items") and _len(t) == 3 and _type(t[2]) is list:
            if kind == "values":
                return {i: self.decode(x, depth + 1) for i, x in enumerate(t[2])}.values()
            if kind == "keys":
                return dict.fromkeys(check_hashes([self.decode(x, depth + 1) for x in t[2]])).keys()
            return self._fill({}, t[2], depth).items()
        raise NotData("malformed standard value")

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

    # --- writing back -------------------------------------------------------

    def writeback(self, snaps: list[object], raised: bool = False) -> list[Any]:
        """``[n, contents]`` of each numbered container of the request that
        differs from its snapshot, for the caller to `refill`; also when the
        request raised (what it changed stays changed in one program), unless
        encoding its answer had numbered containers (an exception crosses on
        a codec of its own, so they would be unknown on the other side)."""
        if not snaps or (raised and _len(self.memo) != _len(snaps)):
            return []
        return [[n, self.contents(self.memo[n], 0)] for n in changed(self.memo, snaps)]

    def refill(self, target: Any, t: Any) -> None:
        """Make ``target`` (a numbered container of this side) hold the
        contents ``t`` describes, in place: the caller's object keeps its
        identity and type, and takes the callee's mutations."""
        self.unnumbered = True
        fresh = self.decode(t)
        self.unnumbered = False
        if _type(fresh) is not _type(target) or _type(target) is _float:
            raise NotData("a written-back value changed its type")
        if _type(target) is list or _type(target) is bytearray:
            target[:] = fresh
        elif _type(target) is _deque:
            target.clear()
            target.extend(fresh)
        else:
            target.clear()
            target.update(fresh)


def _items(v: Any) -> Any:
    """A mapping's items in its own order: an OrderedDict keeps one of its
    own (``move_to_end``), which the dict underneath does not follow."""
    return _od_items(v) if _type(v) is _OrderedDict else _dict_items(v)


def _number(x: Any) -> float:
    if _type(x) is float or _type(x) is int:
        return float(x)
    raise NotData("malformed complex")


_VIEWS: dict[type, str] = {
    _type({}.keys()): "keys",
    _type({}.values()): "values",
    _type({}.items()): "items",
}
"""A dict's views: rebuilt as views of a fresh dict (equality as the view
type's own: set-like for keys and items, identity for values)."""


def snapshot(memo: list[Any]) -> list[object]:
    """What each numbered container holds now (its items' identities), to
    tell after a call which ones the callee changed."""
    out: list[object] = []
    for v in memo:
        t = _type(v)
        if t is bytearray:
            out.append(bytes(v))
        elif t in (dict, _Counter, _OrderedDict, _defaultdict):
            out.append([x for pair in _items(v) for x in pair])
        else:
            out.append([] if t is _float else list(v))
    return out


def changed(memo: list[Any], snaps: list[object]) -> list[int]:
    """Numbers of the containers whose contents differ from ``snaps``."""
    now = snapshot(memo[: _len(snaps)])
    out = []
    old: Any
    new: Any
    for n, (old, new) in enumerate(zip(snaps, now, strict=True)):
        if _type(old) is bytes:
            if old != new:
                out.append(n)
        elif _len(old) != _len(new) or any(a is not b for a, b in zip(old, new, strict=True)):
            out.append(n)
    return out
