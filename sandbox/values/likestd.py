"""A test's subclass of a standard value type that adds only class-level
helpers (a ``FakeDate(datetime.date)`` whose classmethod ``today`` a test
patches in for ``datetime.date``): its instances cross to the candidate as
the standard value, so the candidate's code computes with them as it would
with the test's objects in one program (``isocalendar()``, arithmetic,
``strftime``), where a proxy would read no attribute. A subclass that
defines any instance behaviour of its own (a method, a property, a
``__str__``) stays a proxy: the standard value would answer otherwise.

Imports only the standard library and `stdvalues`.
"""

from __future__ import annotations

from typing import Any

from . import stdvalues

_PLAIN = (classmethod, staticmethod, str, type(None), tuple, dict)
"""What a class body may hold and still add no instance behaviour: class
and static methods, and the entries Python itself puts there (the module
and qualified names, the docstring, ``__slots__``, annotations)."""
_STANDARD = (*stdvalues.TIMES, *stdvalues.BY_TEXT.values())


def standard_base(cls: type) -> type | None:
    """The standard value type ``cls`` derives from, if everything between
    adds only class-level helpers, else None."""
    if not issubclass(cls, _STANDARD):
        return None
    for k in cls.__mro__[:8]:
        if k in _STANDARD:
            return k
        for name, value in vars(k).items():
            if name in ("__dict__", "__weakref__"):
                continue
            if not isinstance(value, _PLAIN):
                return None
    return None


def tree(v: Any, codec: Any) -> object | None:
    """``v`` as its standard value's tree, where `standard_base` allows."""
    base = standard_base(type(v))
    if base is None:
        return None
    return stdvalues.standard_tree(v, base, codec, 0)
