"""The test's ``type`` and ``id``, where it reads them, answering for the
candidate's objects as one program would, or naming what they cannot.

A candidate's object is a handle in the verifier, so the builtin ``type()``
of it is the handle's class: ``type(kept[0]) is ListNode`` would fail for a
node of the program's ``ListNode``. The test's ``type`` (`Type`) gives, for
a handle on an instance, the program's class as the child names it (a
handle on that class: the same object the test's ``ListNode`` is), so
``type(x) is ListNode``, ``type(x).__name__`` and ``type(x)(...)`` are the
program's; anything else is the builtin's answer. The child names the
class by ``type()`` of its object, which runs none of the candidate's code,
and only a class of the program's (a handle on a class) is taken.

``id()`` of a handle is the handle's number, not the candidate's number for
its object: an answer keyed by ``id(node)`` that the test looks up by
``id(root)`` finds nothing. The test's ``id`` (`identity`) notes the reason
a failed check then names; it still gives the verifier's number, since the
child's would let the candidate choose which of the test's ``id()``
comparisons hold.
"""

from __future__ import annotations

from typing import Any

from .handles import COROUTINE, GENERATOR, IS_CLASS, is_handle
from .outcomes import Refused

_builtin_type = type
_builtin_id = id
_OWN_CLASS = IS_CLASS | COROUTINE | GENERATOR
"""Handles whose ``type()`` stays the verifier's (a class's metaclass, a
coroutine's and a generator's class, which the handle's face answers)."""


class _TypeMeta(type):
    """``Type``'s metaclass: ``Type(x)`` is `class_of`, and ``isinstance``
    and ``issubclass`` against ``Type`` are those of ``type`` (a handle on
    a class of the program's is an instance, as its class is one there)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Type:
            if len(args) == 1 and not kwargs:
                return class_of(args[0])
            return _builtin_type(*args, **kwargs)
        return super().__call__(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is not Type:
            return super().__instancecheck__(obj)
        return isinstance(obj, _builtin_type) or (is_handle(obj) and bool(obj._flags & IS_CLASS))

    def __subclasscheck__(cls, sub: Any) -> bool:
        return issubclass(sub, _builtin_type) if cls is Type else super().__subclasscheck__(sub)


class Type(type, metaclass=_TypeMeta):
    """The test's ``type`` (see the module docstring)."""


Type.__name__ = Type.__qualname__ = "type"
Type.__module__ = "builtins"  # repr(type) as the builtin's


def class_of(x: Any) -> Any:
    """``type(x)`` as one program answers it (see the module docstring)."""
    if is_handle(x) and not x._flags & _OWN_CLASS:
        found = x._ask("type")
        if is_handle(found) and found._flags & IS_CLASS:
            return found
    found = _builtin_type(x)
    return Type if found is _builtin_type else found


def identity(x: Any, /) -> int:
    """The test's ``id`` (see the module docstring)."""
    if is_handle(x):
        Refused.note(
            "strict scoring: the test took id() of the candidate's object, which in the test's "
            "process is the id of a handle, not the candidate's id of it (in one program they "
            "are one object)"
        )
    return _builtin_id(x)


def bind(scope: dict[str, Any], names: set[str]) -> None:
    """Put `Type` and `identity` in the test's scope where it reads
    ``type`` or ``id`` and neither it nor the prompt defines them."""
    if "type" in names and "type" not in scope:
        scope["type"] = Type
    if "id" in names and "id" not in scope:
        scope["id"] = identity
