"""Plain data: the only thing that crosses from a candidate's process to a judge.

A value computed where candidate code runs is trusted only as data. The
sending side converts it to a tagged tree made of exact builtin types (no
subclasses, no custom ``__eq__``, no code); the receiving side (the verifier,
or the engine) rebuilds fresh builtin objects from it, so whatever the
candidate's objects would have done when compared, hashed or printed never
happens on the judging side.

Accepted: ``None``, ``bool``, ``int`` (up to a million bits), ``float``,
``complex``, ``str``, ``bytes``, ``list``, ``tuple``, ``set``, ``frozenset``,
``dict``, ``range``. A subclass of one of these (a namedtuple, an IntEnum,
``OrderedDict``/``defaultdict``/``Counter``, a str subclass) and a numpy
scalar travel as their builtin value, read with the builtin type's own
methods, so whatever the subclass overrides (``__eq__`` included) stays
behind in the candidate's process; an iterator or generator is drained (up
to the node limit) and arrives as an iterator over its items. Anything else
(an object, a function, a numpy array) is `NotPlain`, so the candidate fails.

Hashing is guarded too: a set or dict whose items share one hash value more
than `MAX_SAME_HASH` times (ints ``k * (2**61 - 1)`` all hash alike) would
take quadratic time to build, so it is refused before it is built.

Scalars go through as msgpack scalars; everything else becomes a
``[tag, ...]`` list, which is unambiguous because a bare list is never a
scalar. Both sides bound size and depth. Imports nothing but msgspec and the
standard library, so the sandbox can load it without the engine.
"""

from __future__ import annotations

import collections
import collections.abc
import reprlib
from typing import Any

import msgspec

from . import wire
from .wire import AS_BASE, check_hashes

MAX_SAME_HASH = wire.MAX_SAME_HASH
MAX_DEPTH = 100
MAX_NODES = 1_000_000
MAX_BYTES = 16 * 1024 * 1024
"""Largest encoded value accepted from an untrusted process."""
MAX_INT_BITS = 1 << 20
"""Largest int accepted (arithmetic on it in a test stays fast)."""

# Bound at import time, before any candidate code runs in a forked child, so
# rebinding builtins.type or builtins.len later does not change the encoder.
_type = type
_len = len
_int = int
_float = float
_complex = complex
_repr = repr
_iter = iter
_next = next
_isinstance = isinstance
_StopIteration = StopIteration
_issubclass = issubclass
_ExactTypes = (bool, int, float, str, bytes, type(None))
_Iterator = collections.abc.Iterator
NotPlain = wire.NotData
"""The value is not plain builtin data."""


def _int_bytes(v: int) -> bytes:
    return v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)


def to_plain(value: object) -> object:
    """Convert ``value`` to a msgpack-safe tagged tree, or raise NotPlain."""
    count = [0]

    def conv(v: object, depth: int) -> object:
        count[0] += 1
        if count[0] > MAX_NODES or depth > MAX_DEPTH:
            raise NotPlain("value too large or too deeply nested")
        t = _type(v)
        if t is bool or t is str or t is bytes or v is None:
            return v
        if t is _int:
            if -(2**63) <= v < 2**63:  # type: ignore[operator]
                return v
            if v.bit_length() > MAX_INT_BITS:  # type: ignore[attr-defined]
                raise NotPlain(f"int of more than {MAX_INT_BITS} bits")
            return ["i", _int_bytes(v)]  # type: ignore[arg-type]
        if t is _float:
            return ["F", _repr(v)] if v != v else v  # keep nan distinguishable
        if t is _complex:
            return ["c", v.real, v.imag]  # type: ignore[attr-defined]
        if t is list:
            return ["l", [conv(x, depth + 1) for x in v]]  # type: ignore[attr-defined]
        if t is tuple:
            return ["t", [conv(x, depth + 1) for x in v]]  # type: ignore[attr-defined]
        if t is set:
            return ["s", [conv(x, depth + 1) for x in v]]  # type: ignore[attr-defined]
        if t is frozenset:
            return ["f", [conv(x, depth + 1) for x in v]]  # type: ignore[attr-defined]
        if t is dict:
            items: list[tuple[object, object]] = list(dict.items(v))  # type: ignore[arg-type]
            return ["d", [[conv(k, depth + 1), conv(x, depth + 1)] for k, x in items]]
        if t is range:
            return ["r", v.start, v.stop, v.step]  # type: ignore[attr-defined]
        for base, read in AS_BASE:
            if _issubclass(t, base):
                return conv(read(v), depth + 1)
        if getattr(t, "__module__", None) == "numpy" and getattr(v, "shape", None) == ():
            item = v.item()  # type: ignore[attr-defined]  # a numpy scalar's builtin value
            if getattr(_type(item), "__module__", None) != "numpy":
                return conv(item, depth + 1)
        if _isinstance(v, _Iterator):
            drained: list[object] = []
            it = _iter(v)  # type: ignore[call-overload]
            while True:
                try:
                    item = _next(it)
                except _StopIteration:
                    break
                drained.append(conv(item, depth + 1))
            return ["it", drained]
        raise NotPlain(f"value of type {t.__name__} is not plain builtin data")

    return conv(value, 0)


def dumps(value: object) -> bytes:
    return msgspec.msgpack.encode(to_plain(value))


def from_plain(tree: Any) -> Any:
    """Rebuild a value from a tagged tree (the input is untrusted)."""
    count = [0]

    def build(t: Any, depth: int) -> Any:
        count[0] += 1
        if depth > MAX_DEPTH or count[0] > MAX_NODES:
            raise NotPlain("value too large or too deeply nested")
        if not isinstance(t, list):
            if t is None or type(t) in _ExactTypes:
                return t
            raise NotPlain(f"unexpected scalar {type(t).__name__}")
        if len(t) < 2 or not isinstance(t[0], str):
            raise NotPlain("malformed container")
        tag, body = t[0], t[1]
        if tag == "i" and type(body) is bytes:
            if len(body) * 8 > MAX_INT_BITS + 8:
                raise NotPlain(f"int of more than {MAX_INT_BITS} bits")
            return int.from_bytes(body, "little", signed=True)
        if tag == "F" and type(body) is str:
            return float(body)
        if tag == "c" and len(t) == 3:
            return complex(_scalar_float(t[1]), _scalar_float(t[2]))
        if tag == "r" and len(t) == 4 and all(type(x) is int for x in t[1:]):
            r = range(t[1], t[2], t[3])
            if len(r) > MAX_NODES:
                raise NotPlain("range too long")
            return r
        if not isinstance(body, list) or len(t) != 2:
            raise NotPlain("malformed container body")
        if tag == "l":
            return [build(x, depth + 1) for x in body]
        if tag == "t":
            return tuple(build(x, depth + 1) for x in body)
        if tag == "s":
            return set(check_hashes([build(x, depth + 1) for x in body]))
        if tag == "f":
            return frozenset(check_hashes([build(x, depth + 1) for x in body]))
        if tag == "it":
            return iter([build(x, depth + 1) for x in body])
        if tag == "d":
            keys, values = [], []
            for pair in body:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise NotPlain("malformed dict item")
                keys.append(build(pair[0], depth + 1))
                values.append(build(pair[1], depth + 1))
            return dict(zip(check_hashes(keys), values, strict=True))
        raise NotPlain(f"unknown tag {tag!r}")

    return build(tree, 0)


def _scalar_float(x: Any) -> float:
    if type(x) is float or type(x) is int:
        return float(x)
    raise NotPlain("malformed complex")


def loads(data: bytes) -> Any:
    """Decode bytes from an untrusted process into fresh builtin values.

    Anything odd (too large, malformed, unhashable set items) is NotPlain.
    """
    if len(data) > MAX_BYTES:
        raise NotPlain(f"value larger than {MAX_BYTES} bytes")
    try:
        return from_plain(msgspec.msgpack.decode(data))
    except NotPlain:
        raise
    except Exception as exc:  # malformed bytes from an untrusted process
        raise NotPlain(f"undecodable value: {type(exc).__name__}") from None


# --- judging plain values (engine and verifier side) -------------------------


def _key(v: Any, depth: int) -> Any:
    """A hashable form of ``v`` that keeps every type: two values have equal
    keys exactly when they are equal *and* of the same types throughout."""
    if depth > MAX_DEPTH:
        raise NotPlain("too deeply nested to compare")
    t = type(v)
    if t in (list, tuple):
        return (t.__name__, tuple(_key(x, depth + 1) for x in v))
    if t in (set, frozenset):
        return (t.__name__, frozenset(_key(x, depth + 1) for x in v))
    if t is dict:
        return ("dict", frozenset((_key(k, depth + 1), _key(x, depth + 1)) for k, x in v.items()))
    if t is range:
        return ("range", v)
    if t in _ExactTypes or t is complex:
        return (t.__name__, v)
    raise NotPlain(f"value of type {t.__name__} is not plain builtin data")


def exact_equal(a: object, b: object) -> bool:
    """Python equality that also requires identical types at every level, so
    ``0`` is not ``False``, ``1`` is not ``1.0`` and ``[1]`` is not ``(1,)``.

    Returns False (never raises) for values it cannot compare.
    """
    try:
        return bool(_key(a, 0) == _key(b, 0))
    except (NotPlain, RecursionError, TypeError, ValueError):
        return False


class _Short(reprlib.Repr):
    """reprlib's bounded repr, keeping dicts in insertion order."""

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = [
            f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}"
            for k, v in list(x.items())[: self.maxdict]
        ]
        if len(x) > self.maxdict:
            pieces.append("...")
        return "{" + ", ".join(pieces) + "}"


_short = _Short()
_short.maxstring = 60
_short.maxother = 60
_short.maxlong = 60


def _small(value: object, budget: int = 2000) -> bool:
    """Few enough nodes and characters that the builtin repr is cheap."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > budget:
            return False
        t = type(v)
        if t in (list, tuple, set, frozenset):
            stack.extend(v)  # type: ignore[arg-type]
        elif t is dict:
            stack.extend(v.keys())  # type: ignore[attr-defined]
            stack.extend(v.values())  # type: ignore[attr-defined]
        elif t in (str, bytes) and len(v) > 10_000:  # type: ignore[arg-type]
            return False
        elif t is int and v.bit_length() > 10_000:  # type: ignore[attr-defined]
            return False
    return True


def safe_repr(value: object, limit: int = 200) -> str:
    """A short ``repr`` for messages; bounded work, never raises."""
    try:
        text = repr(value) if _small(value) else _short.repr(value)
    except Exception:
        if type(value) is int:
            text = f"<int of {value.bit_length()} bits>"
        else:
            text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
