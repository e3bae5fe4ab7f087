"""What the candidate's child may do to the test's objects (the requests
a `session.Session` serves): call the test's functions, read public
attributes of instances of the test's own classes and set their data
attributes, and compare, hash, test the truth of and combine them, each
answered by the test's own code, for the candidate's code to use in its
own answer."""

from __future__ import annotations

import inspect
import operator
import sys
import types
from collections.abc import Callable
from typing import Any

from .. import protocol
from ..values import asyncrun, fieldsof, signature
from . import teststeps
from .outcomes import Refused, told


def perform(target: Any, op: str, args: Any, test_module: str) -> Any:
    """Do ``op`` (a request of the child's) on the test's object ``target``."""
    if op == "call":
        if type(args) is not tuple or len(args) != 2 or type(args[0]) is not tuple:
            raise TypeError("malformed call")
        return target(*args[0], **(args[1] or {}))
    if op == "getattr":
        if type(args) is not str or not _readable(target, args, test_module):
            if type(args) is str and _present(target, args):
                Refused.note(
                    f"strict scoring: the candidate's code read {args[:100]!r} of the test's "
                    f"{type(target).__name__[:100]} object, which strict scoring does not "
                    "let it read"
                )
            raise AttributeError(f"the test's object has no readable attribute {args!r}")
        return getattr(target, args)
    if op == "signature":  # ``inspect.signature`` of the test's callable, as data
        return signature.describe(target)
    if op == "enter":  # ``with`` in the candidate's code: the test's own methods
        return type(target).__enter__(target)
    if op == "exit":
        if type(args) is not tuple or len(args) != 2:
            raise TypeError("malformed exit")
        return bool(type(target).__exit__(target, args[0], args[1], None))
    if op == "await":
        if args is not True or not asyncrun.alone():
            raise RuntimeError(  # the child's request gets an answer
                told(
                    "strict scoring: the candidate's code awaited the test's coroutine beside "
                    "other tasks, which only one event loop shared by both could interleave"
                )
            )
        return asyncrun.run_nested(target)
    if op == "step":  # the candidate's loop drives the test's coroutine
        return teststeps.step(target, args)
    if op == "fields":
        most = min(args, fieldsof.MOST) if type(args) is int else 1
        return fieldsof.fields_of(target, most, lambda o: plain(o, test_module))
    if op == "setattrs":
        if type(args) is not list:
            raise TypeError("malformed setattrs")
        for item in args:
            if type(item) is not list or len(item) != 3:
                raise TypeError("malformed setattrs")
            perform(item[0], "setattr", item[1:], test_module)
        return None
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


def plain(obj: Any, test_module: str) -> bool:
    """An instance of a class of the test's whose fields are read and
    written by Python's own attribute access (none of the test's code)."""
    return (
        _owned(obj, test_module)
        and fieldsof.plain(obj)
        and type(obj).__setattr__ is object.__setattr__  # type: ignore[comparison-overlap]
    )


def _readable(target: Any, name: str, test_module: str) -> bool:
    """May the candidate read ``name`` of the test's object? A public
    attribute of an instance (or class) of the test's own, of a standard
    stream, match or temporary file (``io.StringIO``, ``re.Match``), and of
    a ``unittest.mock`` object other than the mock's own interface
    (``return_value``, ``assert_called_with``, ``reset_mock``...): the test's
    code answers what the candidate reads (a ``MagicMock``'s child mocks,
    ``now()`` of a patched ``datetime.datetime``)."""
    if name in _NAMING and type(target) in _FUNCTIONS:
        return True  # set by ``def``: what a decorator copies or reads
    if name.startswith("_"):
        return False
    if _owned(target, test_module):
        return True
    cls = type(target)
    if cls.__module__ in _STANDARD_MODULES:
        return True
    mock = sys.modules.get("unittest.mock")
    return mock is not None and isinstance(target, mock.NonCallableMock) and not hasattr(cls, name)


_NAMING = frozenset(
    {"__name__", "__qualname__", "__doc__", "__module__", "__annotations__", "__defaults__"}
    | {"__kwdefaults__", "__dict__"}
)
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)

_STANDARD_MODULES = frozenset({"_io", "io", "re", "tempfile", "_csv"})
"""Modules whose objects the test may hand the candidate to read and use
(a stream to write to, a match, a temporary file, a CSV writer)."""


def _present(target: Any, name: str) -> bool:
    """Has the test's object attribute ``name`` (found without running
    any code of the object's)?"""
    try:
        inspect.getattr_static(target, name)
    except AttributeError:
        return False
    return True


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
