"""The data attributes of the test's objects, as the candidate's child
reads and writes them between two runs of the test's code.

An object of the test's own class is a `proxy.Proxy` in the child, and each
attribute read or write would be a round trip to the verifier: a candidate
that walks (or relinks) a 2,000-node list the test built would make
thousands. So the first read of an object asks the verifier for its data
attributes (``fields``): the public instance attributes that hold no
callable and that its class does not define, of the object and of up to
`BATCH` objects of the test's plain classes it reaches through them (the
rest of a linked list: `FIRST` at first, twice as many each time after). Reads of those names are answered here; writes of
them are kept here and handed over in one request (``setattrs``) before the
child's next request or answer, where the verifier makes each with the
checks of any write. A class with its own ``__setattr__``,
``__getattribute__`` or ``__getattr__``, slots, or a name not among the
fields, goes to the verifier each time.

Nothing of the test's code runs while the child works between two of its
own requests: any other request (a call, a comparison, a callback) and any
new request from the verifier starts the cache afresh, so a read gives what
the test's object holds then, as in one program.
"""

from __future__ import annotations

from typing import Any

from ..values import fieldsof, lent
from .proxy import Proxy

BATCH, FIRST = fieldsof.MOST, fieldsof.FIRST
_MISSING = object()
_type = type
_len = len
_dict = dict


class Fields:
    """One child's cache (see the module docstring)."""

    def __init__(self, ask: Any) -> None:
        self.ask = ask
        """``ask(vid, op, args)``: a request to the verifier (`serve._Peer`)."""
        self.known: dict[int, dict[str, Any]] = {}
        self.opaque: set[int] = set()
        """Objects whose fields the verifier gave none of (not plain)."""
        self.pending: dict[tuple[int, str], tuple[Any, Any]] = {}
        self.batch = FIRST
        self.lent = lent.Lent()
        """The containers read, for the candidate's changes to reach the
        test's objects (`lent`)."""

    def get(self, proxy: Any, name: str) -> Any:
        vid = proxy._vid
        found = self.known.get(vid)
        if found is None and vid not in self.opaque and not name.startswith("_"):
            found = self._fetch(vid)
        if found is not None:
            value = found.get(name, _MISSING)
            if value is not _MISSING:
                self.lent.lend(proxy, name, value)
                return value
        return self.ask(vid, "getattr", name)

    def put(self, proxy: Any, name: str, value: Any) -> bool:
        """Keep a write of a known field; False if it must go now."""
        found = self.known.get(proxy._vid)
        if found is None or name not in found:
            return False
        found[name] = value
        self.pending[(proxy._vid, name)] = (proxy, value)
        return True

    def _fetch(self, vid: int) -> dict[str, Any] | None:
        got = self.ask(vid, "fields", self.batch)
        self.batch = min(self.batch * 2, BATCH)
        if _type(got) is not list or not got:
            self.opaque.add(vid)
            return None
        for item in got[:BATCH]:
            if _type(item) is list and _len(item) == 2 and _type(item[1]) is _dict:
                if _type(item[0]) is Proxy and item[0]._vid not in self.known:
                    self.known[item[0]._vid] = item[1]
        return self.known.get(vid)

    def flush(self) -> None:
        """Hand the kept writes to the verifier, in the order made."""
        if not self.pending:
            return
        writes = [[proxy, name, value] for (_, name), (proxy, value) in self.pending.items()]
        self.pending = {}
        self.ask(writes[0][0]._vid, "setattrs", writes)

    def clear(self) -> None:
        self.known.clear()
        self.opaque.clear()
        self.batch = FIRST
