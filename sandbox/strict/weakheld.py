"""The test's objects the candidate holds only weakly, let go with the test.

The child says which of the test's objects it holds through weak
references alone (a ``WeakValueDictionary`` cache of the objects a test's
factory made: the ``weak`` request, `process.pins`). Before each request
the verifier checks whether the test still holds each of them: one held
by nothing but the session's own table is one the test let go (``del x;
gc.collect()``), and the child is told to let go of its proxy too, so the
candidate's weak references die as they would in one program. The table's
bound methods of an object (what the candidate called on it) hold it
too, and are not counted as the test's.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .. import protocol
from ..values import world

_probe = [object()]
ALONE = sys.getrefcount(_probe[0])
"""References to an object that only a list holds, as counted below."""
del _probe


def note(session: Any, vids: object) -> None:
    """The child holds these objects of the test's only weakly."""
    for vid in vids if type(vids) is list else ():
        if type(vid) is int and 0 <= vid < len(session.objects):
            session.weakly.add(vid)


def bound(methods: dict[int, int], method: types.MethodType) -> None:
    """Count a bound method the session's table holds (the candidate read
    ``listener.on``): a reference to its object that is not the test's."""
    methods[id(method.__self__)] = methods.get(id(method.__self__), 0) + 1


def release(session: Any) -> None:
    """Tell the child which of them the test no longer holds."""
    objects, methods = session.objects, session.methods
    gone = [
        vid
        for vid in session.weakly
        if sys.getrefcount(objects[vid]) <= ALONE + methods.get(id(objects[vid]), 0)
    ]
    if gone:
        session.weakly.difference_update(gone)
        session._exchange(protocol.Op(ref=world.REF, op="release", args=sorted(gone)))
