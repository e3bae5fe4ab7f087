"""How long the child keeps the test's objects, and its own the test
holds handles on: as long as the test does.

The child holds a `proxy.Proxy` for each object of the test's it was
given (``pinned``), so the same object is the same proxy on every use.
A candidate that holds one only weakly (a ``WeakValueDictionary`` cache, a
``WeakSet``) must see it die when the test lets its object go, as in one
program: the child tells the verifier which new proxies it holds weakly
(`weakly`, the ``weak`` request), the verifier says when the test no
longer holds their objects (``release``), and the child lets go of its own
reference, so only the candidate's keep the proxy alive. A proxy that is
still alive is the same one if the test hands its object over again.

The other way (`drop`), when the test runs the collector, the verifier
names the handles the test no longer holds, and the child lets go of
those objects of the program's that the candidate's code does not hold
either, so the test's weak references to them die (and the candidate's).
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

_getweakrefcount = weakref.getweakrefcount
_type = type


class Pins:
    def __init__(self, make: Any) -> None:
        self.make = make
        """Makes the proxy for a number of the verifier's."""
        self.pinned: dict[int, Any] = {}
        self.loose: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        """Released proxies the candidate's code still holds."""
        self.fresh: list[int] = []

    def proxy(self, vid: int) -> Any:
        """The proxy for the verifier's object ``vid`` (the test holds it)."""
        found = self.pinned.get(vid)
        if found is None:
            found = self.loose.pop(vid, None)
            if found is None:
                found = self.make(vid)
                self.fresh.append(vid)
            self.pinned[vid] = found
        return found

    def weakly(self) -> list[int]:
        """The proxies made since the last call that the candidate's code
        now holds weak references to."""
        if not self.fresh:
            return []
        out = [v for v in self.fresh if v in self.pinned and _getweakrefcount(self.pinned[v])]
        self.fresh.clear()
        return out

    def release(self, vids: object) -> None:
        """The test no longer holds these objects: keep their proxies only
        while the candidate's code does."""
        for vid in vids if _type(vids) is list else ():
            found = self.pinned.pop(vid, None) if _type(vid) is int else None
            if found is not None:
                self.loose[vid] = found


def drop(objects: list[Any], ids: dict[int, int], hids: object) -> list[int]:
    """The other way: the verifier's handles on these objects of the
    program's are held by nothing of the test's any more (the test ran the
    collector). Let go of each one the candidate's code does not hold either,
    so it dies here as in one program (its ``__del__`` runs, the
    candidate's own weak references to it die), and return their numbers:
    those the candidate still holds stay, and keep their number."""
    watched: list[tuple[int, int, Any]] = []
    for hid in hids if _type(hids) is list else ():
        if _type(hid) is not int or not 0 <= hid < _len(objects) or objects[hid] is None:
            continue
        try:
            ref = _ref(objects[hid])
        except TypeError:  # no weak references to it: kept
            continue
        watched.append((hid, _id(objects[hid]), ref))
        objects[hid] = None
    if watched:
        _collect()
    gone = []
    for hid, key, ref in watched:
        obj = ref()
        if obj is None:
            ids.pop(key, None)
            gone.append(hid)
        else:
            objects[hid] = obj
    return gone


_ref = weakref.ref
_id = id
_len = len
_collect = gc.collect
