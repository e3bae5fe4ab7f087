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
  ``numpy.bool_``. A defaultdict's factory that is not a builtin type is
  a reference: a missing key calls it on its own side.
- ``["h", id, flags, base, name]``: an object that stays in the child (an
  instance of the candidate's class, a generator, a function); the verifier
  holds a handle whose calls go back to the child (see `handles`).
- ``["v", id]``: an object that stays in the verifier (a function the test
  passes); the child holds a proxy whose calls come back to the verifier.
- ``["e", type, base, class, args]``: an exception.
- ``["k", n]``: a container both sides hold (`kept`), the receiver's own
  of that number.
- ``["o", f, j, contents]``: the receiver's own container ``j`` of its
  request ``f`` still being answered, now holding ``contents`` (`opened`).
- ``["u", bytes]``: a string holding a lone surrogate, which UTF-8 cannot
  carry, as its ``surrogatepass`` bytes (only when a frame would not encode
  otherwise: see `protocol.encode_frame`).

`Codec` does one side's half (its decoder is `unwire`'s); what a foreign
object becomes, and what a reference resolves to, is the side's business
(its ``foreign`` and ``refer`` hooks). Both sides bound size and depth;
the decoder trusts nothing.
Imports only the standard library (numpy lazily, when a tree names it).
"""

from __future__ import annotations

import collections
import itertools
import operator
from collections.abc import Callable
from typing import Any

from . import stdvalues, unwire
from .opened import Opened

MAX_DEPTH = stdvalues.MAX_DEPTH
UNSENT = stdvalues.UNSENT
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
_deque, _Counter, _OrderedDict = unwire.DEQUE, unwire.COUNTER, unwire.ORDERED
_defaultdict, _Decimal, _Fraction = unwire.DEFAULTDICT, unwire.DECIMAL, unwire.FRACTION
_FACTORY_NAMES = {id(v): k for k, v in unwire.FACTORIES.items()}
PLAIN = unwire.PLAIN
SELF = frozenset({bool, str, bytes, type(None)})
"""What is its own tree whatever its value (an int or a float may not be)."""
MUTABLE = (list, dict, set, bytearray, _deque, _Counter, _OrderedDict, _defaultdict)
"""Containers that get a number in an exchange (and can be written back)."""
AS_BASE = stdvalues.AS_BASE


def _int_bytes(v: int) -> bytes:
    return v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)


class Codec(unwire.Decoding):
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
        held: dict[int, int] | None = None,
        opened: Opened | None = None,
    ) -> None:
        self.foreign = foreign
        self.refer = refer
        self.held = held
        """The containers both sides hold (`kept.Kept.index`), which cross
        as ``["k", n]``: the other side's own of that number."""
        self.opened = opened
        """The side's open exchanges: a container of the other side's
        request still being answered crosses as that one (`opened`)."""
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
            if self.held:
                n = self.held.get(_id(v))
                if n is not None:
                    return ["k", n]
            seen = self._seen(v)
            if seen is not None:
                return seen
            if self.opened is not None and self.opened.serving:
                at = self.opened.find(v)
                if at is not None:
                    return ["o", at[0], at[1], self.contents(v, depth)]
            return self.contents(v, depth)
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
        if t is _defaultdict:  # a factory of the sender's own is called there
            factory = v.default_factory
            name: object = _FACTORY_NAMES.get(_id(factory))
            if factory is not None and name is None:
                name = self.foreign(factory)
            return ["x", "defaultdict", name, self._pairs(v, depth)]
        raise NotData(f"not a container: {t.__name__}")

    def _pairs(self, v: Any, depth: int) -> list[object]:
        return [[self.encode(k, depth + 1), self.encode(x, depth + 1)] for k, x in _items(v)]

    # --- writing back -------------------------------------------------------

    def writeback(self, snaps: list[object], raised: bool = False) -> list[Any]:
        """``[n, contents]`` of each numbered container of the request that
        differs from its snapshot, for the caller to `refill`; also when the
        request raised (what it changed stays changed in one program), but not
        one both sides hold from now on, which `kept` keeps in step, unless
        encoding its answer had numbered containers (an exception crosses on
        a codec of its own, so they would be unknown on the other side)."""
        if not snaps or (raised and _len(self.memo) != _len(snaps)):
            return []
        held = self.held or {}  # kept in step on their own (`kept`)
        memo = self.memo
        return [
            [n, self.contents(memo[n], 0)] for n in changed(memo, snaps) if _id(memo[n]) not in held
        ]

    def refill(self, target: Any, t: Any) -> None:
        """Make ``target`` (a numbered container of this side) hold the
        contents ``t`` describes, in place: the caller's object keeps its
        identity and type, and takes the callee's mutations."""
        self.unnumbered = True
        fresh = self.decode(t)
        self.unnumbered = False
        unwire.fill(target, fresh)


def _items(v: Any) -> Any:
    """A mapping's items in its own order: an OrderedDict keeps one of its
    own (``move_to_end``), which the dict underneath does not follow."""
    return _od_items(v) if _type(v) is _OrderedDict else _dict_items(v)


_VIEWS: dict[type, str] = {
    _type({}.keys()): "keys",
    _type({}.values()): "values",
    _type({}.items()): "items",
}
"""A dict's views: rebuilt as views of a fresh dict (equality as the view
type's own: set-like for keys and items, identity for values)."""


def members(v: Any) -> Any:
    """The objects a numbered container holds, as one iterable: a
    sequence's or set's items, a mapping's keys and values in turn; none
    for a NaN or a bytearray (whose bytes are compared as bytes)."""
    t = _type(v)
    if t in _MAPPINGS:
        return _chain(_items(v))
    if t is _float or t is bytearray:
        return ()
    return v


def snapshot(memo: list[Any]) -> list[object]:
    """What each numbered container holds now (its items' identities), to
    tell after a call which ones the callee changed."""
    return [bytes(v) if _type(v) is bytearray else list(members(v)) for v in memo]


def changed(memo: list[Any], snaps: list[object]) -> list[int]:
    """Numbers of the containers whose contents differ from ``snaps``: by
    length, else item by item by identity (``map`` over ``operator.is_``,
    no copy, none of the items' own code run)."""
    out = []
    old: Any
    for n, old in enumerate(snaps):
        v = memo[n]
        t = _type(v)
        if t is bytearray:
            if old != v:
                out.append(n)
        elif t is not _float:
            size = 2 * _len(v) if t in _MAPPINGS else _len(v)
            if _len(old) != size or not _all(_map(_is, members(v), old)):
                out.append(n)
    return out


_MAPPINGS = (dict, _Counter, _OrderedDict, _defaultdict)
_is, _all, _map = operator.is_, all, map
_chain = itertools.chain.from_iterable
