"""Plain-data encoding of Python values, for judging outside the candidate.

A value computed in the candidate's process is only trusted as data: the
child converts it to a tagged tree made of exact builtin types (no
subclasses, no custom ``__eq__``) and the engine rebuilds and compares it.
Anything else (an object, a subclass of int, a generator) cannot be encoded
and the candidate fails. Scalars go through as msgpack scalars; containers
become ``[tag, items]`` lists, which is unambiguous because a bare list is
never a scalar.

Used on both sides: by the harness in the child (``to_plain``) and by the
engine (``from_plain``). It imports nothing but msgspec.
"""

from __future__ import annotations

from typing import Any

import msgspec

MAX_DEPTH = 100
MAX_NODES = 1_000_000

# Bound at import time, before any candidate code runs in a forked child, so
# rebinding builtins.type or builtins.len later does not change the encoder.
_type = type
_len = len
_str = str
_int = int
_float = float
_complex = complex
_sorted = sorted
_repr = repr
_ExactTypes = (bool, int, float, str, bytes, type(None))


class NotPlain(Exception):
    """The value is not plain builtin data."""


def to_plain(value: object) -> object:
    """Convert ``value`` to a msgpack-safe tagged tree, or raise NotPlain."""
    count = [0]

    def conv(v: object, depth: int) -> object:
        count[0] += 1
        if count[0] > MAX_NODES or depth > MAX_DEPTH:
            raise NotPlain("value too large or too deeply nested")
        t = _type(v)
        if t is bool or t is _str or t is bytes or v is None:
            return v
        if t is _int:
            if -(2**63) <= v < 2**63:  # type: ignore[operator]
                return v
            return ["i", _str(v)]
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
            return [
                "d",
                [[conv(k, depth + 1), conv(x, depth + 1)] for k, x in v.items()],  # type: ignore[attr-defined]
            ]
        raise NotPlain(f"value of type {t.__name__} is not plain builtin data")

    return conv(value, 0)


def dumps(value: object) -> bytes:
    return msgspec.msgpack.encode(to_plain(value))


def from_plain(tree: Any, depth: int = 0) -> Any:
    """Rebuild a value from a tagged tree (engine side; input is untrusted)."""
    if depth > MAX_DEPTH:
        raise NotPlain("too deeply nested")
    if not isinstance(tree, list):
        if tree is None or type(tree) in _ExactTypes:
            return tree
        raise NotPlain(f"unexpected scalar {type(tree).__name__}")
    if len(tree) < 2 or not isinstance(tree[0], str):
        raise NotPlain("malformed container")
    tag, body = tree[0], tree[1]
    if tag == "i":
        return int(body)
    if tag == "F":
        return float(body)
    if tag == "c":
        return complex(float(tree[1]), float(tree[2]))
    if not isinstance(body, list):
        raise NotPlain("malformed container body")
    if tag == "l":
        return [from_plain(x, depth + 1) for x in body]
    if tag == "t":
        return tuple(from_plain(x, depth + 1) for x in body)
    if tag == "s":
        return {from_plain(x, depth + 1) for x in body}
    if tag == "f":
        return frozenset(from_plain(x, depth + 1) for x in body)
    if tag == "d":
        return {from_plain(k, depth + 1): from_plain(v, depth + 1) for k, v in body}
    raise NotPlain(f"unknown tag {tag!r}")


def loads(data: bytes) -> Any:
    """Decode bytes from a child into a Python value; NotPlain on anything odd."""
    try:
        tree = msgspec.msgpack.decode(data)
        return from_plain(tree)
    except NotPlain:
        raise
    except Exception as exc:  # malformed bytes from an untrusted process
        raise NotPlain(f"undecodable value: {exc}") from None
