"""The common call on a strict job's channel, without a `wire.Codec`: a
call whose arguments are plain values (a test's numbers and strings) and
no keywords, and an answer that is one. Both sides send and read exactly
the trees the codec makes (property-tested against it); anything else goes
through the codec.
"""

from __future__ import annotations

from typing import Any

from .wire import PLAIN, SELF

_type = type
_len = len
_int = int
_float = float

PLAIN_CALL = 64
"""Most arguments a call may have for `plain_args` to take it."""


def own_tree(v: object) -> bool:
    """Is ``v`` its own tree (a string, a small int, a float that is a
    number, ...)? Such a value crosses as itself, with no `Codec`."""
    t = _type(v)
    return (
        t in SELF
        or (t is _int and -(2**63) <= v < 2**63)  # type: ignore[operator]
        or (t is _float and v == v)
    )


def plain_args(args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> list[Any] | None:
    """The tree `Codec.encode` makes of a call's ``(args, kwargs)`` when
    every argument is its own tree and there are no keywords (the common
    call: a test's numbers and strings), else None."""
    if kwargs or _len(args) > PLAIN_CALL or not all(map(own_tree, args)):
        return None
    return ["t", [["t", list(args)], None]]


def plain_call(tree: Any) -> tuple[tuple[Any, ...], None] | None:
    """What `Codec.decode` makes of a call's tree of plain arguments (the
    shape `plain_args` sends), else None: the caller decodes it in full."""
    if _type(tree) is not list or _len(tree) != 2 or tree[0] != "t":
        return None
    body = tree[1]
    if _type(body) is not list or _len(body) != 2 or body[1] is not None:
        return None
    inner = body[0]
    if _type(inner) is not list or _len(inner) != 2 or inner[0] != "t":
        return None
    items = inner[1]
    if _type(items) is not list or _len(items) > PLAIN_CALL:
        return None
    for x in items:
        if _type(x) not in PLAIN:
            return None
    return tuple(items), None
