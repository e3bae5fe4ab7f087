"""Names the test assigns that the candidate's code reads: attributes of
standard modules (``math.pi = 3``, ``sys.stdin = io.StringIO(...)``) and
globals that the test rebinds (``global now; now = ...``), which in one
program are the program's globals too.

In the verifier, an `Assigned` keeps what each watched name held when the
check began, and `changed` lists the ones that hold something else now, as
``(module, attribute, value)`` items like `patches.snapshot`'s (module ""
is the program's globals), for `world` to hand over with the patches. What
a test may assign is read off its code: the attribute names it stores
(``STORE_ATTR``), looked up on the modules already imported when the check
begins (not the verifier's own); the globals its functions assign
(``STORE_GLOBAL``); ``sys.stdin`` always.
"""

from __future__ import annotations

import dis
import sys
import types
from typing import Any

ATTRIBUTES = frozenset({dis.opmap["STORE_ATTR"], dis.opmap["DELETE_ATTR"]})
GLOBALS = frozenset({dis.opmap["STORE_GLOBAL"], dis.opmap["DELETE_GLOBAL"]})
_EXTENDED = dis.opmap["EXTENDED_ARG"]
_MISSING = object()
MAX_WATCHED = 256
_OWN = ("aioeval", "sandbox", "msgspec")
"""Packages of the verifier itself, whose attributes are not the test's."""


def stored(code: types.CodeType, ops: frozenset[int]) -> set[str]:
    """The names ``code`` (and the code nested in it) assigns or deletes
    with the instructions ``ops``: `ATTRIBUTES` (``x.name = ...``) or
    `GLOBALS` (``global name; name = ...`` in a function)."""
    out: set[str] = set()
    raw, names, arg = code.co_code, code.co_names, 0
    for i in range(0, len(raw), 2):
        op = raw[i]
        if op == _EXTENDED:
            arg = (arg | raw[i + 1]) << 8
            continue
        if op in ops:
            index = arg | raw[i + 1]
            if index < len(names):
                out.add(names[index])
        arg = 0
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= stored(const, ops)
    return out


class Assigned:
    """What the watched names held when the check began."""

    def __init__(self, attributes: set[str]) -> None:
        self.watched: list[tuple[str, Any, str, Any]] = [("sys", sys, "stdin", sys.stdin)]
        # Only for a test that assigns attributes: a look at every module
        # copies their pages in a check's process.
        for name, module in list(sys.modules.items()) if attributes else ():
            if len(self.watched) >= MAX_WATCHED:
                break
            if not isinstance(module, types.ModuleType) or name.startswith(_OWN):
                continue
            found = vars(module)
            for attribute in attributes & found.keys():
                if not attribute.startswith("_"):
                    self.watched.append((name, module, attribute, found[attribute]))
        self.scope: dict[str, Any] = {}
        self.globals: dict[str, Any] = {}

    def names(self) -> set[str]:
        """The watched module attributes, as ``module.attribute``."""
        return {f"{name}.{attribute}" for name, _, attribute, _ in self.watched}

    def watch_globals(self, scope: dict[str, Any], names: list[str]) -> None:
        """Watch the test's globals ``names`` (the ones its functions
        assign) from their values now (or their absence): rebound, the
        program's global of that name is rebound too, as in one program."""
        self.scope = scope
        self.globals = {
            k: scope.get(k, _MISSING)
            for k in names[:MAX_WATCHED]
            if not isinstance(scope.get(k), types.ModuleType)
        }

    def changed(self) -> list[tuple[str, str, Any]]:
        out = [
            (name, attribute, now)
            for name, module, attribute, start in self.watched
            if (now := getattr(module, attribute, _MISSING)) is not start and now is not _MISSING
        ]
        scope = self.scope
        for key, start in self.globals.items():
            now = scope.get(key, _MISSING)
            if now is not start and now is not _MISSING:
                out.append(("", key, now))
        return out
