"""The standard classes a strict job's child names to the verifier, known
by identity.

The child tells the verifier that an exception or warning is of a builtin
class (``ValueError``) or of a standard module's (``json.JSONDecodeError``),
and the verifier answers with its own class of that name. The candidate's
code can rebind any name the child could look such a class up by
(``builtins.ValueError = Mine``, ``json.JSONDecodeError = Mine``) and can
rename its own classes, so the child never looks them up: the builtins'
classes are taken when this module is imported, in the template, before
any candidate code runs, and a standard module's classes when the module
finishes loading (`watch`: those loaded already, and a finder that takes
those of each standard module loaded later, from the standard library's
own files). A class that only claims a standard name crosses as the
program's own class would.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import sys
import sysconfig
import types
from typing import Any

_type = type
_isinstance = isinstance
_str = str
_id = id
_getattr = getattr
_len = len
_walked_at = [0]
"""How many modules were loaded at the last walk."""

BUILTINS: dict[str, type] = {
    name: c for name, c in vars(builtins).items() if _isinstance(c, type) and c.__name__ == name
}
"""The builtins' classes by name, as they were before any candidate code ran."""
_BUILTIN_IDS = {_id(c): name for name, c in BUILTINS.items()}
_STDLIB_NAMES = frozenset(sys.stdlib_module_names)
_HOME = sysconfig.get_path("stdlib").rstrip("/") + "/"
_KNOWN: dict[int, tuple[type, str, str]] = {}
"""Standard modules' classes by id: the class and the module and qualified
name it had when its module finished loading."""
_WALKED: set[str] = set()
_Builtin = importlib.machinery.BuiltinImporter
_Frozen = importlib.machinery.FrozenImporter
_PathFinder = importlib.machinery.PathFinder
_ModuleType = types.ModuleType


def builtin_name(cls: object) -> str | None:
    """The builtin name of ``cls`` if it is that builtin class itself."""
    name = _BUILTIN_IDS.get(_id(cls))
    return name if name is not None and BUILTINS[name] is cls else None


def builtin(name: object) -> type | None:
    """The builtin class of that name (as it was before the candidate ran)."""
    return BUILTINS.get(name) if _type(name) is _str else None  # type: ignore[arg-type]


def standard(cls: object) -> tuple[str, str] | None:
    """``(module, qualname)`` of a standard module's class, as it was when
    the module loaded; None for any other class, whatever it is named."""
    found = _KNOWN.get(_id(cls))
    return (found[1], found[2]) if found is not None and found[0] is cls else None


def _record(name: str, module: object) -> None:
    """Take the classes a standard module holds (its own and those it
    imported from other standard modules)."""
    _WALKED.add(name)
    names = _getattr(module, "__dict__", None)
    if _type(names) is not dict:
        return
    for value in list(names.values()):
        if _isinstance(value, type) and _id(value) not in _KNOWN:
            module_name = value.__dict__.get("__module__")
            qualname = _getattr(value, "__qualname__", None)
            if _type(module_name) is _str and _type(qualname) is _str:
                if module_name.partition(".")[0] in _STDLIB_NAMES:
                    _KNOWN[_id(value)] = (value, module_name, qualname)


def _from_stdlib(module: object) -> bool:
    path = _getattr(module, "__file__", None)
    if path is None:
        return True  # built in, or a namespace of the standard library's
    return _type(path) is _str and _in_stdlib(path)


def _in_stdlib(path: str) -> bool:
    return path.startswith(_HOME) and "/site-packages/" not in path


def _walk() -> None:
    """Take the classes of the standard modules not walked yet. Cheap when
    no module was loaded since the last walk, so the template walks before
    each fork and its children find nothing to walk: a walk in a child
    touches every class it reads, and each touched page is copied."""
    if _len(sys.modules) == _walked_at[0]:
        return
    for name, module in list(sys.modules.items()):
        if name not in _WALKED and name.partition(".")[0] in _STDLIB_NAMES:
            if _isinstance(module, _ModuleType) and _from_stdlib(module):
                _record(name, module)
    _walked_at[0] = _len(sys.modules)


def settle() -> None:
    """In the template, before each fork: walk what it loaded since."""
    _walk()


class _Finder:
    """First on ``sys.meta_path`` in the child: a standard module found in
    the standard library's own files is loaded as usual, and its classes
    taken as soon as it has run, before the code that imported it goes on."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> Any:
        if name.partition(".")[0] not in _STDLIB_NAMES:
            return None
        if _Builtin.find_spec(name, path, target) or _Frozen.find_spec(name, path, target):
            return None  # loaded by its usual finder (built in: walked before)
        spec = _PathFinder.find_spec(name, path, target)
        origin = _getattr(spec, "origin", None)
        loader = _getattr(spec, "loader", None)
        if _type(origin) is not _str or not _in_stdlib(origin) or loader is None:
            return None
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _record(name, module)

        loader.exec_module = exec_module
        return spec


_FINDER = _Finder()


def watch() -> None:
    """In the child, before the candidate's program runs: take the classes
    of the standard modules loaded so far, and of each one loaded later."""
    _walk()
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)  # type: ignore[arg-type]


_walk()
