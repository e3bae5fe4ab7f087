"""Which questions a prompt's class can answer for the test.

A prompt may declare a class as a skeleton (ClassEval style): methods with
a docstring or ``pass`` for a body, for the completion to fill. The
verifier compares instances of the program's class of that name through
the prompt's class (`handles.Handle`), which works only where the prompt
defines the method that answers: a stub ``__eq__`` (or none, where the
program's class has one) would compare by identity, a missing ``__lt__``
would raise ``TypeError``. There the question is refused with its reason
instead, since only the candidate's own code could answer it.
"""

from __future__ import annotations

import dis
import inspect
from types import CodeType, FunctionType
from typing import Any

_STUB_BODIES = (
    (("LOAD_CONST", None), ("RETURN_VALUE", None)),
    (("LOAD_GLOBAL", "NotImplementedError"), ("RAISE_VARARGS", 1)),
    (("LOAD_GLOBAL", "NotImplementedError"), ("PRECALL", 0), ("CALL", 0), ("RAISE_VARARGS", 1)),
)
_SKIPPED = frozenset({"RESUME", "NOP", "CACHE", "PUSH_NULL"})
_STUBS: dict[CodeType, bool] = {}
_MISSING = object()

QUESTIONS: dict[str, tuple[str, ...]] = {
    "==": ("__eq__",),
    "hash()": ("__hash__",),
    "the truth value": ("__bool__", "__len__"),
    "'in'": ("__contains__", "__iter__"),
    "lt": ("__lt__",),
    "le": ("__le__",),
    "gt": ("__gt__",),
    "ge": ("__ge__",),
}
"""A question the test asks of a handle, and the methods (any one of them)
that answer it."""


def is_stub(fn: object) -> bool:
    """Is ``fn`` a function whose body only declares it (a docstring,
    ``pass``, ``...`` or ``raise NotImplementedError``)?"""
    if type(fn) is not FunctionType:
        return False
    code = fn.__code__
    found = _STUBS.get(code)
    if found is None:
        steps = tuple(
            (i.opname, i.argval) for i in dis.get_instructions(code) if i.opname not in _SKIPPED
        )
        found = _STUBS[code] = steps in _STUB_BODIES
    return found


def declared_only(cls: type, name: str) -> bool:
    """Does the prompt's ``cls`` leave ``name`` to the completion: a stub,
    or Python's default where the program's class defines its own?"""
    found = inspect.getattr_static(cls, name, _MISSING)
    if found is None:  # unhashable: as the prompt's own __eq__ made it
        return name == "__hash__" and is_stub(inspect.getattr_static(cls, "__eq__", None))
    if found is _MISSING or getattr(found, "__objclass__", None) is object:
        return True
    return is_stub(found)


def builds_nothing(cls: type) -> bool:
    """Is the prompt's ``__init__`` for ``cls`` a stub (its objects are
    the program's alone to build)?"""
    return is_stub(inspect.getattr_static(cls, "__init__", None))


def answers(twin: Any, question: str) -> bool:
    """Can the prompt's class ``twin`` answer ``question`` for the program's
    object, which defines its own way to answer it?"""
    names = QUESTIONS.get(question)
    if names is None or not isinstance(twin, type):
        return True
    return any(not declared_only(twin, name) for name in names)
