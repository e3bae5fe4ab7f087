"""``id()`` of the test's objects in the candidate's code, noted.

A test's object reaches the candidate's code as a proxy, so ``id()`` of it
there is the proxy's number, not the test's: an answer keyed by ``id(node)``
of the test's nodes finds none of them when the test looks up
``t[id(root)]`` (a ``KeyError`` or a failed ``assert``). The child's
``id`` is wrapped once, before the program loads (`install`): where its
argument is one of the test's objects and the caller is not the engine's
own code, the call is noted (`NOTED`), and the fact goes to the verifier
with the child's state (`mirror`), whose reason a failed check carries.
The number returned is the real ``id()`` of the proxy: giving the test's
number would hand the verifier's addresses to the candidate, and a noted
reason is enough to tell the user why strict judges otherwise.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable
from typing import Any

NOTED: list[str] = []
"""One entry per check at most (`mirror.Mirror.report` takes it)."""
_id = id
_type = type
_getframe = sys._getframe
_ENGINE = __name__.rpartition(".values.")[0] + "."


def install(is_test_object: Callable[[object], bool]) -> None:
    """Wrap the child's builtin ``id`` (once)."""
    if getattr(builtins.id, "__wrapped__", None) is _id:
        return

    def id(obj: Any, /) -> int:
        if is_test_object(obj) and not NOTED:
            caller = _getframe(1).f_globals.get("__name__")
            if _type(caller) is not str or not caller.startswith(_ENGINE):
                NOTED.append("id")
        return _id(obj)

    id.__wrapped__ = _id  # type: ignore[attr-defined]
    id.__doc__ = _id.__doc__
    builtins.id = id
