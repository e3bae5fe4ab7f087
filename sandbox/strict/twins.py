"""The program's objects against the prompt's own classes: an object the
test builds with the program's class of a prompt class's name must be what
the prompt's class builds from the same arguments (`built_alike`), a
member of the program's enum is the prompt's member of its name and value
(`member`), and an instance's attributes stand for no method of the
prompt's class (`shadows`)."""

from __future__ import annotations

import enum
import inspect
import types
from typing import Any

from .outcomes import Refused

NO_VALUE = object()
"""What a handle has in place of a value the test may compare."""
HANDLE: list[Any] = []
"""`handles.Handle`, set when that module loads (it imports this one)."""
_OBJECT_EQ: object = object.__eq__
_TEST_MODULE = "__main__"
MAX_PAIRS = 1_000_000
"""Pairs of objects `_same` compares at most (a structure of the prompt's
and the program's, walked side by side)."""


def built_alike(guard: tuple[str, type], got: Any, args: Any, kwargs: Any) -> None:
    """Refuse an object the test built with the program's class of a
    prelude class's name unless the prelude's class builds the same from
    the same arguments: the test builds what it compares with that class,
    and a program that redefines it must not decide both sides."""
    name, make = guard
    try:
        alike = _same(make(*args, **kwargs), got, set())
    except Exception:
        alike = False
    if not alike:
        raise Refused(
            f"strict scoring: the program's {name} builds objects differently from the "
            "problem's own on the test's input"
        )


def guard_attribute(session: Any, guard: tuple[str, Any], name: str, value: Any) -> None:
    """What the test reads off a guarded prelude class: a factory
    (``Point.of``) builds what the test compares as the constructor does,
    and is guarded the same way; an object of the prelude's own classes
    (``Point.ORIGIN``) must agree with the prelude's."""
    owner, cls = guard
    made = inspect.getattr_static(cls, name, None)
    if isinstance(made, classmethod | staticmethod) and HANDLE and type(value) is HANDLE[0]:
        session.guards[value._hid] = (f"{owner}.{name}", getattr(cls, name))
    elif type(made).__module__ == cls.__module__ and not isinstance(made, type | enum.Enum):
        try:
            alike = _same(made, value, set())
        except Exception:
            alike = False
        if not alike:
            raise Refused(
                f"strict scoring: the program's {owner}.{name} differs from the problem's own"
            )


def same(want: Any, got: Any) -> bool:
    """Do two structures agree, compared as the prompt's classes compare
    them (`_same`)? For a prompt helper's answer and the program's."""
    return _same(want, got, set())


def _same(want: Any, got: Any, seen: set[tuple[int, int]]) -> bool:
    """Do the prelude's object and the program's agree? Objects of classes
    that keep the default ``==`` (a prelude's ``Node`` its ``LinkedList``
    makes) by their attributes, the rest by the prelude's ``==``. Walked
    with a list of pairs, not recursion: a linked list of any length costs
    one read per node (up to `MAX_PAIRS` pairs)."""
    todo = [(want, got)]
    while todo:
        if len(seen) > MAX_PAIRS:
            return False
        want, got = todo.pop()
        if want is got or (id(want), id(got)) in seen:
            continue
        seen.add((id(want), id(got)))
        if HANDLE and type(want) is HANDLE[0] and type(got) is HANDLE[0]:
            want = want._plain()  # both the program's: compared as the prompt's
        if HANDLE and type(got) is HANDLE[0]:
            got = got._plain()
            if got is NO_VALUE or want is NO_VALUE:
                return False
        if type(want) is not type(got) and not _kin(type(want), type(got)):
            if not want == got:
                return False
        elif type(want) in (list, tuple):
            if len(want) != len(got):
                return False
            todo.extend(reversed(list(zip(want, got, strict=True))))
        elif type(want) is dict or type(want).__eq__ is _OBJECT_EQ:
            a, b = (want, got) if type(want) is dict else (_state(want), _state(got))
            if a.keys() != b.keys():
                return False
            todo.extend(reversed([(a[k], b[k]) for k in a]))
        elif not want == got:
            return False
    return True


def _kin(a: type, b: type) -> bool:
    """One class of the prompt's, from two runs of the prompt (the test's
    and the one that made the twin an object of the program's is read as)."""
    return a.__qualname__ == b.__qualname__ and a.__module__ == b.__module__ == _TEST_MODULE


def member(twin: enum.EnumMeta, state: dict[str, Any], base: type | None = None) -> Any:
    """The prelude's member of the name and value that a member of the
    program's enum of that name has (a singleton: not made anew), where the
    program's enum mixes in the same builtin ``base`` (an ``IntEnum``
    written out as a plain ``Enum`` compares otherwise)."""
    mixed = getattr(twin, "_member_type_", object)
    if (None if mixed is object else mixed) is not base:
        return NO_VALUE
    name, value = state.get("_name_"), state.get("_value_")
    member = twin.__members__.get(name) if type(name) is str else None
    if member is None and issubclass(twin, enum.Flag) and type(value) is int:
        try:  # a combination of flags (or none): the prompt's Flag makes it
            member = twin(value)
        except ValueError:
            return NO_VALUE
    if member is None or not _same(member.value, value, set()):
        return NO_VALUE
    return member


def shadows(cls: type, key: str) -> bool:
    """Would an instance attribute ``key`` stand in for something ``cls``
    defines as code (a method, a property), or for Python's own names?
    Asked once per class and name (each node of a long list asks again)."""
    known = _shadowing.get((cls, key))
    if known is None:
        known = _shadowing[(cls, key)] = _shadows(cls, key)
    return known


_shadowing: dict[tuple[type, str], bool] = {}
"""`shadows`' answers: the prompt's classes are the verifier's, and fixed
once the prompt ran."""


def _shadows(cls: type, key: str) -> bool:
    if key.startswith("__") and key.endswith("__"):
        return True
    found = inspect.getattr_static(cls, key, None)
    if type(found) is types.MemberDescriptorType:  # a slot: where the attribute lives
        return False
    return callable(found) or hasattr(found, "__get__")


def _state(obj: object) -> dict[str, Any]:
    found = getattr(obj, "__dict__", None)
    out = dict(found) if type(found) is dict else {}
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                out[slot] = getattr(obj, slot)
    return out
