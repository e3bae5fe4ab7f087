"""Which protocols the candidate's object supports, as handle flags.

The verifier's handle class defines every protocol method (``__iter__``,
``__len__``, ``__hash__``, ``__enter__``, ...) for every object, so that
it can forward them; the test's ``isinstance(x, Iterable)``, ``Hashable``,
``Sized``, a ``typing.Protocol`` runtime check and ``len()``/``hash()``
must still answer as for the program's object (`strict.handlefaces`). In
the child, `bits` says which of those methods the object's class lacks
(or sets to None) and which standard ABCs that only registration or
inheritance answers (``numbers.Number``, ``Sequence``, ``Mapping``, ...)
it is an instance of; they ride in the handle's flags above the others
(`described.flags`).

Runs in the candidate's child; the ABCs are bound at import, before any
candidate code runs.
"""

from __future__ import annotations

import abc
import collections.abc
import numbers
from typing import Any

FIRST = 20
"""The flag bit of the first entry of `METHODS` (the bits below are
`described`'s, with room for more)."""
METHODS = (
    "__iter__",
    "__next__",
    "__len__",
    "__contains__",
    "__hash__",
    "__enter__",
    "__exit__",
    "__call__",
    "__reversed__",
    "__int__",
    "__float__",
    "__complex__",
    "__index__",
    "__abs__",
    "__round__",
    "__getitem__",
)
"""Protocol methods whose absence from the object's class the flags carry."""
ABCS: tuple[type, ...] = (
    numbers.Number,
    numbers.Complex,
    numbers.Real,
    numbers.Rational,
    numbers.Integral,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Mapping,
    collections.abc.MutableMapping,
    collections.abc.Set,
    collections.abc.MutableSet,
)
"""Standard ABCs that no method of the class answers (registration or
inheritance does), asked of the object in the child."""
LACKS = {name: 1 << (FIRST + i) for i, name in enumerate(METHODS)}
"""The flag that says the object's class lacks the method."""
IS = {abc: 1 << (FIRST + len(METHODS) + i) for i, abc in enumerate(ABCS)}
"""The flag that says the object is an instance of the ABC."""

_type = type
_getattr = getattr
_issubclass = issubclass
_id = id
_token = abc.get_cache_token
_BaseException = BaseException
_LACKS = tuple(LACKS.items())
_IS = tuple(IS.items())


def bits(v: Any) -> int:
    """The flags of `LACKS` and `IS` that hold for ``v`` (its class's,
    kept per class until an ABC registers another class, as Python's own
    ABC checks keep theirs)."""
    t = _type(v)
    token = _token()
    known = _KNOWN.get(_id(t))
    if known is not None and known[0] is t and known[1] == token:
        return known[2]
    out = 0
    for name, bit in _LACKS:
        try:
            if _getattr(t, name, None) is None:
                out |= bit
        except _BaseException:  # a metaclass's __getattr__ that raises otherwise
            out |= bit
    for kind, bit in _IS:
        try:
            if _issubclass(t, kind):
                out |= bit
        except _BaseException:
            pass
    _KNOWN[_id(t)] = (t, token, out)
    return out


_KNOWN: dict[int, tuple[type, object, int]] = {}


def _gen() -> Any:
    yield None


def _sample() -> None:
    pass


_COMMON: tuple[object, ...] = (
    _sample,
    _gen(),
    bits,
    len,
    object(),
    object,
    _sample.__code__,
    [].append,
)
"""Objects of the types a check's handles mostly stand for (the entry
point's function, a generator, a class, a bound method)."""


def warm() -> None:
    """In the template, before each fork: the flags of the common types,
    whose ABC checks would otherwise fill Python's ABC caches in every
    child (each a page copied). Cheap once done, until an ABC registers."""
    for v in _COMMON:
        bits(v)
