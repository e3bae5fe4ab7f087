"""What the candidate's child may do to the test's objects (the requests
a `session.Session` serves): call the test's functions, read public
attributes of instances of the test's own classes and set their data
attributes, and compare, hash, test the truth of and combine them, each
answered by the test's own code, for the candidate's code to use in its
own answer."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from .. import protocol


def perform(target: Any, op: str, args: Any, test_module: str) -> Any:
    """Do ``op`` (a request of the child's) on the test's object ``target``."""
    if op == "call":
        if type(args) is not tuple or len(args) != 2 or type(args[0]) is not tuple:
            raise TypeError("malformed call")
        return target(*args[0], **(args[1] or {}))
    if op == "getattr":
        if type(args) is not str or args.startswith("_") or not _owned(target, test_module):
            raise AttributeError(f"the test's object has no readable attribute {args!r}")
        return getattr(target, args)
    if op in _UNARY:
        return _UNARY[op](target)
    if op == "getitem":
        return target[args]
    if op == "contains":
        return args in target
    if op == "operator":
        if type(args) is not list or len(args) != 3 or args[0] not in _OPERATORS:
            raise TypeError("malformed operator")
        fn = getattr(operator, _OPERATORS[args[0]])
        return fn(args[1], target) if args[2] is True else fn(target, args[1])
    if op == "setattr":
        if type(args) is not list or len(args) != 2 or type(args[0]) is not str:
            raise TypeError("malformed setattr")
        name = args[0]
        if (
            name.startswith("_")
            or not _owned(target, test_module)
            or isinstance(target, type)
            or hasattr(type(target), name)  # a method, property or class constant
            or callable(getattr(target, name, None))
        ):
            raise AttributeError(f"the test's object has no writable attribute {name!r}")
        setattr(target, args[0], args[1])
        return None
    raise TypeError(f"operation {op!r} is not available on the test's objects")


def _owned(target: Any, test_module: str) -> bool:
    """Is ``target`` the test's own (an instance of or a class it defined)?"""
    cls = target if isinstance(target, type) else type(target)
    return getattr(cls, "__module__", None) == test_module


_UNARY: dict[str, Callable[[Any], Any]] = {
    "iter": iter,
    "next": next,
    "len": len,
    "str": str,
    "repr": repr,
    "bool": bool,
    "hash": hash,
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": abs,
}
_OPERATORS = {name: name for name in ("eq", "ne", "lt", "le", "gt", "ge", *protocol.ARITHMETIC)}
"""What the child may ask of the test's objects beyond reading them: the
test's own code answers (comparisons, hashing and arithmetic on the test's
objects, used by the candidate's code for its own answer)."""
