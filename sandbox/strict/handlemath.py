"""A handle's arithmetic, ordering and conversions (`handles.Handle`).

Each applies Python's own operator to the handle's builtin value, read in
the child with the builtin type's methods, and never runs the candidate's
operators: ``handle < 3`` on a subclass of ``int`` compares the int. A
handle with no builtin value refuses (`handles.Handle._value`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift")


def install(cls: Any) -> None:
    """Give ``cls`` (`handles.Handle`, which imports this module) its
    operators and conversions."""

    def value(x: Any, question: str) -> Any:
        return x._value(question) if type(x) is cls else x

    def forward(name: str) -> Callable[..., Any]:
        op = getattr(operator, name)

        def forwarded(self: Any, *others: Any) -> Any:
            values = [value(o, name) for o in others]  # in the order Python asked
            return op(self._value(name), *values)

        return forwarded

    def reflected(name: str) -> Callable[[Any, Any], Any]:
        op = getattr(operator, name)
        return lambda self, other: op(other, self._value(name))

    def converter(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        return lambda self, *more: fn(self._value(f"{name}()"), *more)

    for name in ("lt", "le", "gt", "ge", *BINARY, "neg", "pos", "abs", "index", "invert"):
        setattr(cls, f"__{name}__", forward(name))
    for name in BINARY:
        setattr(cls, f"__r{name}__", reflected(name))
    for name, op in (("and", "and_"), ("or", "or_"), ("xor", "xor")):
        setattr(cls, f"__{name}__", forward(op))
        setattr(cls, f"__r{name}__", reflected(op))
    for name, fn in (("int", int), ("float", float), ("complex", complex), ("round", round)):
        setattr(cls, f"__{name}__", converter(fn, name))
    for name in ("trunc", "floor", "ceil"):
        setattr(cls, f"__{name}__", converter(getattr(math, name), name))
    cls.__divmod__ = lambda self, other: divmod(self._value("divmod()"), value(other, "divmod()"))
    cls.__rdivmod__ = lambda self, other: divmod(other, self._value("divmod()"))
