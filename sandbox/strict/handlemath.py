"""A handle's arithmetic, ordering and conversions (`handles.Handle`).

Ordering (``<``, ``<=``, ``>``, ``>=``) applies Python's own operator to
the handle's builtin value (read in the child with the builtin type's
methods) or to the prompt's twin of the object, and never runs the
candidate's operators: an ordering is a question the test judges. A
handle with neither refuses (`handles.Handle._value`).

Arithmetic (``+``, ``@``, ``|``, ``abs()``, ...) is a computation, not a
verdict: on a subclass of a builtin type, or an object whose prompt class
defines the operator, it is the builtin's or the prompt's; on a class the
prompt declares and the completion completes, it is what the candidate's
class computes, as a method call is (``a + b`` asks ``a.__add__(b)`` in
the child, `arith`), and its result crosses as any value does, for the
test to judge with its own ``==``. On a class the prompt does not know, an
operator would let the candidate answer the test's own tolerance check
(``abs(r - expected) < 1e-6`` with a ``__sub__`` that returns 0), so it
is refused.

A conversion (``float()``, ``int()``, ``round()``, ...) of an object with
no builtin value is the candidate's own number for it, read once until the
candidate's code may have run for another reason: one program's object
gives one number between two uses, and a "root" that answers each
``float()`` of a polynomial's evaluation differently must not be believed.
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
                if name in arith.CONVERSIONS:
                    return _read_once(self, name, list(more))
                return self._ask("operator", [name, *more])
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
    not define it? An operator of a class the prompt does not know is
    refused (see the module docstring); a conversion is not."""
    if handle._base is not None:
        return False
    twin = handle._session.twins.get(handle._name)
    if isinstance(twin, type):
        return skeleton.declared_only(twin, dunder)
    if dunder[2:-2] not in arith.CONVERSIONS:
        handle._refuse(f"{dunder}, an operator of a class the problem does not define,")
    return True


def _read_once(handle: Any, name: str, more: list[Any]) -> Any:
    """The candidate's conversion ``name`` of ``handle``, asked of the
    child once until the candidate's code may have run again (another
    request moved the session's epoch)."""
    key = repr([name, *more])
    epoch, seen = handle._conv
    if epoch != handle._session.epoch:
        seen = {}
    if key not in seen:
        seen[key] = _checked(name, handle._ask("operator", [name, *more]))
        object.__setattr__(handle, "_conv", (handle._session.epoch, seen))  # the ask moved it
    return seen[key]


def _checked(name: str, got: Any) -> Any:
    """A conversion's result as Python requires it (``float()`` of an
    object gives a float), else the ``TypeError`` Python raises."""
    want = _RESULTS.get(name)
    if want is not None and not isinstance(got, want):
        raise TypeError(f"__{name}__ returned non-{want.__name__} (type {type(got).__name__})")
    return got
