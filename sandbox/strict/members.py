"""The prompt's enum members, as the candidate's child gets them.

A member of an enum the prompt defines that the test made itself (a value
of a ``Flag``, ``Perm.R | Perm.W``, or a member the test named through the
prompt's class) reaches the child as the program's member of that value,
so the candidate's code combines it with its own members using its own
enum's operators (``perms |= role_perms[r]``), as in one program. Coming
back it is the prompt's member again (`session.Session._handle`).
"""

from __future__ import annotations

import enum
import itertools
import operator
from typing import Any

from . import skeleton, twins
from .handles import IS_CLASS, Handle
from .outcomes import Refused


def program_member(session: Any, v: enum.Enum) -> int | None:
    """The child's number for the program's member that the prompt's
    member ``v`` stands for (a value of a prompt's ``Flag`` the test made,
    ``Perm.R | Perm.W``): the program's enum of that name, called with the
    value, in the child (so its own operators combine it with the
    candidate's values). None where the test holds no handle on that enum."""
    name = type(v).__qualname__
    if session.twins.get(name) is not type(v) or session.making:
        return None
    cls = next(
        (
            h
            for h in session.handles.values()
            if type(h) is Handle and h._flags & IS_CLASS and h._name == name
        ),
        None,
    )
    if cls is None:
        return None
    session.making = True
    try:
        got = cls._ask("call", ((v.value,), None))
    except Exception:
        return None
    finally:
        session.making = False
    return session.members.get(id(got)) if got is v else None


def as_prompt_member(made: Handle) -> Any:
    """The prompt's member that the program's member ``made`` of the enum
    of that name stands for (same name, same value), else
    `twins.NO_VALUE`. A member of an enum with a builtin type mixed in
    (``IntEnum``, ``IntFlag``, a ``str`` enum) is one too, read by its
    attributes as a plain ``Enum``'s is, not by its builtin value alone:
    ``type(k) is Priority`` and ``k is Priority.HIGH`` hold as in one
    program."""
    if made._base is None:
        return made._plain()
    twin = made._session.twins.get(made._name)
    if not isinstance(twin, enum.EnumMeta):
        return twins.NO_VALUE
    return made._as_twin(twin, made._reading("states"))


MAX_MEMBERS = 256
"""Members of a prompt's enum the verifier reads to take the program's
class for the prompt's (a larger enum stays the program's class)."""


def as_prompt_enum(session: Any, value: Any, trusted: type) -> Any:
    """The test's name for a prompt's enum: the prompt's own enum where the
    program's class of that name (``value``) has exactly its members, by
    name and value in order (the program kept the prompt's enum, or wrote
    it out again), else ``value``. Its members already cross as the
    prompt's, so ``type(k) is Priority`` and ``Priority(4)`` then hold as
    in one program; passed to the candidate's code, it is the program's
    enum again. An enum the prompt only declares (a stub method) or
    with aliases stays the program's: its methods or names may be the
    completion's."""
    twin = session.twins.get(trusted.__qualname__)
    if type(value) is not Handle or not value._flags & IS_CLASS:
        return value
    if not isinstance(twin, enum.EnumMeta) or twin.__module__ != session.test_module:
        return value
    known: list[Any] = list(twin)
    if not 0 < len(known) == len(twin.__members__) <= MAX_MEMBERS:
        return value
    if any(skeleton.is_stub(getattr(f, "__func__", f)) for f in vars(twin).values()):
        return value
    first, told = Refused.first, Refused.told
    try:  # the verifier's own look: nothing of it is the test's question
        found = list(itertools.islice(value, MAX_MEMBERS + 1))
    except (Exception, Refused):
        Refused.first, Refused.told = first, told
        return value
    if len(found) != len(known) or not all(map(operator.is_, found, known)):
        return value
    session.members[id(twin)] = value._hid  # passed to the child: the program's enum
    return twin
