"""A handle's arithmetic, ordering and conversions (`handles.Handle`).

Ordering (``<``, ``<=``, ``>``, ``>=``) applies Python's own operator to
the handle's builtin value (read in the child with the builtin type's
methods) or to the prompt's twin of the object, and never runs the
candidate's operators: an ordering is a question the test judges. A
handle with neither refuses (`handles.Handle._value`).

Arithmetic (``+``, ``@``, ``|``, ``abs()``, ``float()``, ...) is a
computation, not a verdict: on a subclass of a builtin type, or an object
whose prompt class defines the operator, it is the builtin's or the
prompt's; otherwise it is what the candidate's own class computes, as a
method call is (``a + b`` asks ``a.__add__(b)`` in the child, `arith`),
and its result crosses as any value does, for the test to judge with its
own ``==``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ..values import arith
from . import skeleton

_RESULTS: dict[str, type] = {
    "int": int,
    "float": float,
    "complex": complex,
    "index": int,
    "trunc": int,
    "floor": int,
    "ceil": int,
}
"""The type Python requires of a conversion's result."""


def install(cls: Any) -> None:
    """Give ``cls`` (`handles.Handle`, which imports this module) its
    operators and conversions."""

    def value(x: Any, question: str) -> Any:
        return x._value(question) if type(x) is cls else x

    def ordering(name: str) -> Callable[..., Any]:
        op = getattr(operator, name)
        return lambda self, other: op(self._value(name), value(other, name))

    def binary(dunder: str, fn: str) -> tuple[Callable[..., Any], ...]:
        op = arith.COMPUTED[fn]

        def forwarded(self: Any, other: Any) -> Any:
            if own(self, f"__{dunder}__"):
                return self._ask("operator", [fn, other, False])
            return op(self._value(fn), value(other, fn))

        def reflected(self: Any, other: Any) -> Any:
            if own(self, f"__r{dunder}__"):
                return self._ask("operator", [fn, other, True])
            return op(other, self._value(fn))

        def inplace(self: Any, other: Any) -> Any:
            if own(self, f"__i{dunder}__") and own(self, f"__{dunder}__"):
                return self._ask("operator", [f"i{dunder}", other, False])
            return NotImplemented  # Python then applies the binary operator

        return forwarded, reflected, inplace

    def unary(name: str) -> Callable[..., Any]:
        fn = arith.COMPUTED[name]

        def converted(self: Any, *more: Any) -> Any:
            if own(self, f"__{name}__"):
                return _checked(name, self._ask("operator", [name, *more]))
            return fn(self._value(f"{name}()"), *more)

        return converted

    for name in ("lt", "le", "gt", "ge"):
        setattr(cls, f"__{name}__", ordering(name))
    for dunder, fn in (*((n, n) for n in arith.BINARY), *arith.BITWISE):
        forwarded, reflected, inplace = binary(dunder, fn)
        setattr(cls, f"__{dunder}__", forwarded)
        setattr(cls, f"__r{dunder}__", reflected)
        setattr(cls, f"__i{dunder}__", inplace)
    for name in (*arith.UNARY, *arith.CONVERSIONS):
        setattr(cls, f"__{name}__", unary(name))
    cls.__divmod__ = lambda self, other: divmod(self._value("divmod()"), value(other, "divmod()"))
    cls.__rdivmod__ = lambda self, other: divmod(other, self._value("divmod()"))


def own(handle: Any, dunder: str) -> bool:
    """Is ``dunder`` of this handle the candidate's own computation: an
    object with no builtin value whose prompt class (if it has one) does
    not define it?"""
    if handle._base is not None:
        return False
    twin = handle._session.twins.get(handle._name)
    return not isinstance(twin, type) or skeleton.declared_only(twin, dunder)


def _checked(name: str, got: Any) -> Any:
    """A conversion's result as Python requires it (``float()`` of an
    object gives a float), else the ``TypeError`` Python raises."""
    want = _RESULTS.get(name)
    if want is not None and not isinstance(got, want):
        raise TypeError(f"__{name}__ returned non-{want.__name__} (type {type(got).__name__})")
    return got
