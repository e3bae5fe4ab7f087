"""Module attributes the test patches with ``unittest.mock``, as the
candidate's code reads them.

In the verifier, `watch` keeps `ACTIVE`, the test's patches in force (a
``with mock.patch(...)`` block, a ``@mock.patch`` decorator, ``start()``);
`snapshot` lists those whose target is a module: its name, the attribute,
and what the test put there (a ``MagicMock`` stays the test's object, so
the candidate's calls run it in the verifier and the test's
``assert_called_with`` sees them; a plain value crosses as a value). In
the child, `apply` sets them on its own modules and puts back what a patch
that ended had replaced. ``mock.patch.dict(os.environ, ...)`` is the
environment's (see `world`).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

ACTIVE: list[Any] = []
MAX_PATCHES = 64
_MISSING = object()
_ORIGINALS: dict[tuple[str, str], Any] = {}
"""In the child: what each patched attribute held before the first patch."""


def watch() -> None:
    """Keep `ACTIVE` as the test's patches start and stop (once per process)."""
    from unittest import mock

    cls: Any = mock._patch  # type: ignore[attr-defined]
    if getattr(cls, "_aioeval_watched", False):
        return
    enter, leave = cls.__enter__, cls.__exit__

    def __enter__(self: Any) -> Any:
        made = enter(self)
        ACTIVE.append(self)
        return made

    def __exit__(self: Any, *exc: Any) -> Any:
        if self in ACTIVE:
            ACTIVE.remove(self)
        return leave(self, *exc)

    cls.__enter__, cls.__exit__, cls._aioeval_watched = __enter__, __exit__, True


def snapshot() -> list[tuple[str, str, Any]]:
    """The module attributes the test's active patches set, and their values."""
    out = []
    for patch in ACTIVE[:MAX_PATCHES]:
        try:
            target = patch.getter()
        except Exception:
            continue
        name = getattr(patch, "attribute", None)
        if isinstance(target, types.ModuleType) and type(name) is str:
            out.append((target.__name__, name, getattr(target, name, None)))
    return out


def apply(items: Any, decode: Any, scope: dict[str, Any] | None = None) -> None:
    """In the child: the test's patches, ``[module, attribute, value tree]``
    each (module "": a global of the program's, in ``scope``); an attribute
    no longer patched gets back what it held."""
    wanted: dict[tuple[str, str], Any] = {}
    if type(items) is list:
        for item in items[:MAX_PATCHES]:
            if type(item) is list and len(item) == 3 and all(type(x) is str for x in item[:2]):
                try:
                    wanted[(item[0], item[1])] = decode(item[2])
                except Exception:
                    continue
    own = _Scope(scope if scope is not None else {})
    for key in [k for k in _ORIGINALS if k not in wanted]:
        module = own if key[0] == "" else sys.modules.get(key[0])
        original = _ORIGINALS.pop(key)
        if module is not None:
            if original is _MISSING:
                _quietly(delattr, module, key[1])
            else:
                _quietly(setattr, module, key[1], original)
    for (module_name, attribute), value in wanted.items():
        try:
            module = own if module_name == "" else importlib.import_module(module_name)
        except Exception:
            continue
        _ORIGINALS.setdefault((module_name, attribute), getattr(module, attribute, _MISSING))
        _quietly(setattr, module, attribute, value)


class _Scope:
    """The program's globals, used as a module's attributes."""

    def __init__(self, scope: dict[str, Any]) -> None:
        object.__setattr__(self, "_scope", scope)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._scope[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._scope[name] = value

    def __delattr__(self, name: str) -> None:
        self._scope.pop(name, None)


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except (AttributeError, TypeError):
        pass
