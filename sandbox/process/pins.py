"""How long the child keeps the test's objects: as long as the test does.

The child holds a `proxy.Proxy` for each object of the test's it was
given (``pinned``), so the same object is the same proxy on every use.
A candidate that holds one only weakly (a ``WeakValueDictionary`` cache, a
``WeakSet``) must see it die when the test lets its object go, as in one
program: the child tells the verifier which new proxies it holds weakly
(`weakly`, the ``weak`` request), the verifier says when the test no
longer holds their objects (``release``), and the child lets go of its own
reference, so only the candidate's keep the proxy alive. A proxy that is
still alive is the same one if the test hands its object over again.
"""

from __future__ import annotations

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
