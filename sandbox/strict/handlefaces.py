"""What a handle's type says of the protocols it supports.

`handles.Handle` defines every protocol method it forwards (``__iter__``,
``__len__``, ``__hash__``, ``__enter__``, ...), for every object. The
questions Python asks of a type, not of an object, would then say yes
whatever the program's object is: ``isinstance(x, Iterable)``,
``Hashable``, ``Sized``, ``Iterator``, ``AbstractContextManager``,
``typing.SupportsFloat`` or a test's own runtime ``Protocol``. The child
says which protocol methods the object's class lacks and which
registration-only ABCs (``numbers.Number``, ``Sequence``, ``Mapping``)
hold for it (`values.protocols`); here that becomes:

- a **face** per combination, a class that ``handle.__class__`` gives (as
  Python's ABC and protocol checks read it): the methods the program's
  class has, the ones it lacks set to None (as Python reads a method set
  to None: not supported), registered with the ABCs that hold;
- `Meta`, the handle classes' metaclass, whose ``__mro__`` (read by those
  same checks, not by Python's own method lookup) shows a class that
  supports none of them, so the handle class itself never says yes;
- `install`: each of those methods read from a handle raises, where the
  program's class lacks it, the ``TypeError`` Python raises in one program
  (``len()``, ``iter()``, ``hash()``, ``with``, a call), naming the
  program's class; read by a runtime ``Protocol``'s check it is None, as
  Python reads a method set to None: not supported.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from ..values import protocols

_SHOWN = (type("Handle", (), {"__slots__": (), **dict.fromkeys(protocols.METHODS)}), object)
"""What a handle class shows as its ``__mro__``: a class that supports none
of the protocols."""


class Meta(type):
    """The handle classes' metaclass (see the module docstring)."""

    @property
    def __mro__(cls) -> tuple[type, ...]:  # type: ignore[override]
        return _SHOWN


_FACES: dict[tuple[int, tuple[type, ...]], type] = {}
_MASK = sum(protocols.LACKS.values()) | sum(protocols.IS.values())


def _supported(*args: Any) -> Any:
    """A face's stand-in for a method the program's class has (a face only
    answers ABC and protocol checks; nothing calls it)."""
    raise TypeError("a handle's face is not called")


def face(flags: int, module: str, bases: tuple[type, ...] = ()) -> type:
    """The face of a handle with these flags, derived from ``bases`` (the
    verifier's own standard classes the program's class derives from,
    `stdfaces`: ``isinstance(f, logging.Formatter)``)."""
    key = (flags & _MASK, bases)
    made = _FACES.get(key)
    if made is None:
        body: dict[str, Any] = {"__slots__": (), "__module__": module}
        for name, bit in protocols.LACKS.items():
            body[name] = None if flags & bit else _supported
        made = _FACES[key] = _derived(body, bases)
        for abc, bit in protocols.IS.items():
            if flags & bit:
                abc.register(made)  # type: ignore[attr-defined]
    return made


def _derived(body: dict[str, Any], bases: tuple[type, ...]) -> type:
    """A face class with as many of ``bases`` as Python lets one class
    derive from at once (a class that refuses subclasses, or whose layout
    or metaclass conflicts with those taken, is left out)."""
    taken: tuple[type, ...] = ()
    for base in bases:
        try:
            type("Handle", (*taken, base), dict(body))
        except Exception:
            continue
        taken = (*taken, base)
    return type("Handle", taken, body)


class _Gated:
    """A protocol method of the handle class, read from a handle: None
    where the program's class lacks it (``keep`` flags excepted)."""

    __slots__ = ("bits", "fn", "keep", "name")

    def __init__(self, fn: Any, name: str, bits: int, keep: int) -> None:
        self.fn, self.name, self.bits, self.keep = fn, name, bits, keep

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self.fn
        flags = obj._flags
        if flags & self.bits == self.bits and not flags & self.keep:
            if sys._getframe(1).f_globals.get("__name__") == "typing":
                return None  # a runtime Protocol's check: "not supported"
            return functools.partial(_unsupported, self.name, obj._name)
        return self.fn.__get__(obj, owner)


_MESSAGES = {
    "__iter__": "'{}' object is not iterable",
    "__next__": "'{}' object is not an iterator",
    "__len__": "object of type '{}' has no len()",
    "__contains__": "argument of type '{}' is not iterable",
    "__hash__": "unhashable type: '{}'",
    "__enter__": "'{}' object does not support the context manager protocol",
    "__exit__": "'{}' object does not support the context manager protocol",
    "__call__": "'{}' object is not callable",
    "__getitem__": "'{}' object is not subscriptable",
    "__index__": "'{}' object cannot be interpreted as an integer",
    "__int__": "int() argument must be a string, a bytes-like object or a real number, not '{}'",
    "__float__": "float() argument must be a string or a real number, not '{}'",
    "__complex__": "complex() first argument must be a string or a number, not '{}'",
    "__abs__": "bad operand type for abs(): '{}'",
    "__round__": "type {} doesn't define __round__ method",
}


def _unsupported(method: str, name: str, *args: Any) -> Any:
    """What Python raises where the program's class lacks ``method``, in
    its words, naming the program's class (not the handle's)."""
    short = name.rpartition(".")[2]
    raise TypeError(_MESSAGES[method].format(short))


_LACKS = protocols.LACKS
_FALLBACKS = {
    "__iter__": _LACKS["__getitem__"],
    "__contains__": _LACKS["__iter__"] | _LACKS["__getitem__"],
}
"""What Python falls back on where the class lacks the method: iteration
by ``__getitem__``, ``in`` by iterating."""


def install(cls: type, keep: dict[str, int]) -> None:
    """Gate ``cls``'s protocol methods (`protocols.METHODS` it defines);
    ``keep`` names flags under which a method stays whatever the child
    says (a coroutine's ``__next__``, its step; a class's ``__getitem__``,
    which ``__class_getitem__`` answers)."""
    for name, bit in _LACKS.items():
        fn = cls.__dict__.get(name)
        if fn is not None:
            gated = _Gated(fn, name, bit | _FALLBACKS.get(name, 0), keep.get(name, 0))
            setattr(cls, name, gated)
