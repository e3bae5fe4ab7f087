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
from typing import Any

from .handles import IS_CLASS, Handle


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
