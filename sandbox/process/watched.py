"""The prompt's module-level names that the test reads, as the program's
code rebinds them.

In one program the test and the program share one namespace: a prompt's
``_CACHE = None`` that the program's code rebinds with ``global`` is the
new value when the test reads ``_CACHE`` next. The verifier names them
(`start`); after each request, and before each of the child's requests to
the test, the names the program's code rebound since are sent to it
(`changed`), as values rebuilt by trusted code, or handles. Binds the
builtins it uses at import: it runs in the candidate's child.
"""

from __future__ import annotations

from typing import Any

_type = type
_str = str
_list = list
_MISSING = object()
MOST = 1000
"""Names a check follows at most."""


class Watched:
    """The names followed, with the object each was bound to when last sent."""

    def __init__(self) -> None:
        self.last: dict[str, object] = {}

    def start(self, scope: dict[str, object], args: object) -> list[list[Any]]:
        """Follow ``args[0]``'s names; ``[name, value]`` of those of
        ``args[1]`` the program binds (objects with state of their own, an
        iterator, that the test's names stand for from the start)."""
        if _type(args) is not _list or len(args) != 2:
            return []
        names, bind = args
        for name in names[:MOST] if _type(names) is _list else ():
            if _type(name) is _str:
                self.last[name] = scope.get(name, _MISSING)
        return [
            [name, self.last[name]]
            for name in (bind if _type(bind) is _list else ())
            if _type(name) is _str and self.last.get(name, _MISSING) is not _MISSING
        ]

    def changed(self, scope: dict[str, object]) -> list[list[Any]]:
        """``[name, value]`` of the names rebound since they were last sent."""
        if not self.last:
            return []
        out: list[list[Any]] = []
        for name, was in self.last.items():
            now = scope.get(name, _MISSING)
            if now is not was:
                self.last[name] = now
                if now is not _MISSING:
                    out.append([name, now])
        return out
