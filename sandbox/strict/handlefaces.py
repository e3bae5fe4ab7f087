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
- `install`: each of those methods read from a handle is None where the
  program's class lacks it, so ``len()``, ``iter()``, ``hash()``, ``with``
  and a call raise ``TypeError`` as in one program, and ``hasattr`` checks
  of a runtime ``Protocol`` see what the program's object has.
"""

from __future__ import annotations

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


_FACES: dict[int, type] = {}
_MASK = sum(protocols.LACKS.values()) | sum(protocols.IS.values())


def _supported(*args: Any) -> Any:
    """A face's stand-in for a method the program's class has (a face only
    answers ABC and protocol checks; nothing calls it)."""
    raise TypeError("a handle's face is not called")


def face(flags: int, module: str) -> type:
    """The face of a handle with these flags."""
    key = flags & _MASK
    made = _FACES.get(key)
    if made is None:
        body: dict[str, Any] = {"__slots__": (), "__module__": module}
        for name, bit in protocols.LACKS.items():
            body[name] = None if flags & bit else _supported
        made = _FACES[key] = type("Handle", (), body)
        for abc, bit in protocols.IS.items():
            if flags & bit:
                abc.register(made)  # type: ignore[attr-defined]
    return made


class _Gated:
    """A protocol method of the handle class, read from a handle: None
    where the program's class lacks it (``keep`` flags excepted)."""

    __slots__ = ("bits", "fn", "keep")

    def __init__(self, fn: Any, bits: int, keep: int) -> None:
        self.fn, self.bits, self.keep = fn, bits, keep

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self.fn
        flags = obj._flags
        if flags & self.bits == self.bits and not flags & self.keep:
            return None
        return self.fn.__get__(obj, owner)


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
            setattr(cls, name, _Gated(fn, bit | _FALLBACKS.get(name, 0), keep.get(name, 0)))
