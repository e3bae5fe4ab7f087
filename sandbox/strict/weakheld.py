"""Objects one side holds only weakly, let go when the other side does.

The child says which of the test's objects it holds through weak
references alone (a ``WeakValueDictionary`` cache of the objects a test's
factory made: the ``weak`` request, `process.pins`). Before each request
the verifier checks whether the test still holds each of them: one held
by nothing but the session's own table is one the test let go (``del x;
gc.collect()``), and the child is told to let go of its proxy too, so the
candidate's weak references die as they would in one program. The table's
bound methods of an object (what the candidate called on it) hold it
too, and are not counted as the test's.

The other way, when the test runs the collector (``gc.collect()``, which
the verifier's process wraps: an automatic collection may come at any
allocation, inside a request), the handles it no longer holds are named to
the child, which lets go of the
objects the candidate's code does not hold either (`process.pins.drop`);
their handles go too, so the test's weak references to the candidate's
objects (``weakref.ref(obj)``, a ``WeakSet``) die as in one program.
Without a collection they live until the check ends.
"""

from __future__ import annotations

import gc
import sys
import types
import weakref
from typing import Any

from .. import protocol
from ..values import world
from .twins import HANDLE

_probe = [object()]
ALONE = sys.getrefcount(_probe[0])
"""References to an object that only a list holds, as counted below."""
del _probe


def install(session: Any) -> None:
    """Follow the test's ``gc.collect()`` for ``session`` (the check's)."""
    global _current
    _current = weakref.ref(session)
    gc.collect = _collect


def _collect(generation: int = 2) -> int:
    """``gc.collect`` as the test calls it: the collection, then the handles
    it let go named to the child (`collect`)."""
    found = _REAL_COLLECT(generation)
    session = _current() if _current is not None else None
    if session is not None and generation == 2:
        collect(session)
    return found


def collect(session: Any) -> None:
    """Name to the child the handles nothing of the test's holds, and drop
    those whose objects died there. Only between requests (a collection
    the test's callback makes while the candidate waits leaves them)."""
    if session.asking or session.depth or session.unread or not session.turn.acquire(False):
        return
    try:
        _drop(session)
    finally:
        session.turn.release()


_REAL_COLLECT = gc.collect
_current: weakref.ref[Any] | None = None


def _drop(session: Any) -> None:
    """See `collect`."""
    handles = session.handles
    idle = [
        hid
        for hid in list(handles)
        if isinstance(handles[hid], HANDLE[0]) and sys.getrefcount(handles[hid]) <= ALONE
    ]
    if not idle:
        return
    session.epoch += 1  # the program's ``__del__`` may run
    reply = session._exchange(protocol.Op(ref=world.REF, op="drop", args=idle))
    session.passed_on.emit(reply.out, reply.err)
    idle_set = set(idle)
    for hid in reply.value if reply.ok and type(reply.value) is list else []:
        if type(hid) is int and hid in idle_set:
            handles.pop(hid, None)
            session.fields_read.known.pop(hid, None)
            session.states_read.known.pop(hid, None)


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
