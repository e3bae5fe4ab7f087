"""Module-level containers of the program's (a prompt's ``DEFAULTS``
dict), which one program shares between the test and the candidate and
the candidate's process holds a copy of: watched, so that a change only
the copy sees is named, never silently lost.

The test reads the prompt's copy in its own process. Before each message
that lets the test's code run again the child compares the watched ones
with what they held when the program loaded (`changed`); the verifier
turns a change to a name its own module has into the check's reason
(`mirror.take`).
"""

from __future__ import annotations

import collections
from typing import Any

from . import wire

MOST = 4096
"""Items watched at most in a check: each is compared at every hand-back
(about 25 ns an item, so 0.1 ms at most); a larger container is not
watched."""
CONTAINERS = (
    list,
    dict,
    set,
    bytearray,
    collections.deque,
    collections.Counter,
    collections.OrderedDict,
    collections.defaultdict,
)
_type = type
_len = len


class Watched:
    """In the child: the containers watched and what each held."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, Any, object]] = []
        self.size = 0
        self.scope: dict[str, Any] = {}

    def globals_of(self, scope: dict[str, Any]) -> None:
        """Watch the program's module-level containers (once it loaded)."""
        self.scope = scope
        for name, value in list(scope.items()):
            if not name.startswith("__") and _type(value) in CONTAINERS:
                self._watch("global", name, value)

    def changed(self) -> list[list[str]]:
        """``[kind, name]`` of each watched container changed since it was
        watched (or rebound); those stop being watched."""
        out: list[list[str]] = []
        keep: list[tuple[str, str, Any, object]] = []
        for item in self.items:
            kind, name, obj, snap = item
            if self.scope.get(name) is not obj or wire.changed([obj], [snap]):
                out.append([kind, name])
            else:
                keep.append(item)
        if out:
            self.items = keep
        return out

    def _watch(self, kind: str, name: str, obj: Any) -> None:
        if self.size + _len(obj) > MOST:
            return
        self.size += _len(obj)
        self.items.append((kind, name, obj, wire.snapshot([obj])[0]))
