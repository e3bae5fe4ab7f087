"""The standard library classes an object of the program's derives from, as
the child names them to the verifier (``logging.Formatter`` for the
program's ``MaskingFormatter(logging.Formatter)``), so that the test's
``isinstance(f, logging.Formatter)`` on the handle answers as for the
program's object (`strict.stdfaces`).

Runs in the candidate's child. Each class is known by identity
(`realclasses.standard`) and read from the type's own ``__mro__`` slot, so
neither a name the candidate's code rebinds nor a metaclass's ``__mro__``
property can make an object seem to derive from a standard class.
"""

from __future__ import annotations

from typing import Any

from . import realclasses

MOST = 8
"""Standard classes named per object, nearest first."""

_type = type
_mro = type.__dict__["__mro__"].__get__
_standard = realclasses.standard
_issubclass = issubclass
_len = len
_BaseException = BaseException
_SKIPPED = ("builtins", "abc", "collections.abc", "numbers", "typing")
"""Modules whose classes cross otherwise: builtins by value or base, ABCs
by the protocol flags (`protocols`), ``typing``'s generics not at all."""


def named(v: Any) -> list[list[str]]:
    """``[[module, qualname], ...]`` of the standard classes in the MRO of
    ``v``'s class, nearest first; none for an exception (it crosses as one)."""
    t = _type(v)
    if _issubclass(t, _BaseException):
        return []
    out: list[list[str]] = []
    for c in _mro(t):
        home = _standard(c)
        if home is not None and home[0] not in _SKIPPED:
            out.append([home[0][:200], home[1][:200]])
            if _len(out) == MOST:
                break
    return out
