"""Frames on every link of the sandbox: a 4-byte little-endian length, then a
msgpack body. A string that UTF-8 cannot carry (a lone surrogate) is
escaped rather than refused."""

from __future__ import annotations

import struct
from typing import Any

import msgspec

HEADER = struct.Struct("<I")
MAX_FRAME = 64 * 1024 * 1024

_encoder = msgspec.msgpack.Encoder()


def encode_frame(msg: object) -> bytes:
    try:
        body = _encoder.encode(msg)
    except UnicodeEncodeError:  # a lone surrogate: UTF-8 cannot carry it
        body = _encoder.encode(_escaped_message(msg))
    return HEADER.pack(len(body)) + body


_TREES = frozenset({"args", "value", "writeback", "names", "shared", "running"})
"""The fields of a channel message that hold value trees (see `wire`)."""


def _escaped_message(msg: object) -> object:
    """``msg`` with each string that holds a lone surrogate made one UTF-8
    carries: in a value tree, ``["u", its surrogatepass bytes]``, which
    `wire` decodes to the same string; in text (what a program printed, a
    reason), its escape."""
    if not isinstance(msg, msgspec.Struct):
        raise TypeError("not a message")
    changes: dict[str, Any] = {}
    for name in msg.__struct_fields__:
        value = getattr(msg, name)
        if name in _TREES:
            changes[name] = _escaped(value)
        elif type(value) is str:
            changes[name] = value.encode("utf-8", "backslashreplace").decode()
    return msgspec.structs.replace(msg, **changes)


def _escaped(tree: Any) -> Any:
    if type(tree) is list:
        return [_escaped(x) for x in tree]
    if type(tree) is str:
        try:
            tree.encode()
        except UnicodeEncodeError:
            return ["u", tree.encode("utf-8", "surrogatepass")]
    return tree
