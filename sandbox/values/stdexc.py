"""A standard module's exception the test's code raises into the
candidate's, as the candidate's own class of that name.

A fake ``urlopen`` of the test's raises ``urllib.error.HTTPError``, a fake
``subprocess.run`` ``CalledProcessError``: the candidate's code catches
them by that class (``except HTTPError``) and reads their attributes
(``e.code``). The verifier names the class (its module, which must be a
standard library module, and qualified name) and hands its public
attributes over as values (`describe`); the child makes an instance of
its own class of that name where the program imported that module (no
module is imported for it: a program that did not import it cannot name
the class), else of the nearest builtin base the tree names, and gives it
the same arguments and attributes (`made`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

MAX_ATTRIBUTES = 32
_STDLIB = sys.stdlib_module_names
_type = type
_len = len
_isinstance = isinstance
_issubclass = issubclass


def describe(cls: type, exc: BaseException, encode: Callable[[Any], Any]) -> list[Any] | None:
    """In the verifier: ``[module, qualified name, attributes]`` for an
    exception of a standard module's class, else None. The attributes are
    a tree of their own (``encode`` a fresh codec's): one the arguments
    hold too (``cmd``) is a copy of it there."""
    module, qualname = cls.__module__, cls.__qualname__
    if module.partition(".")[0] not in _STDLIB or "<" in qualname:
        return None
    found = getattr(exc, "__dict__", None)
    attrs = {
        k: v for k, v in (found.items() if _type(found) is dict else ()) if not k.startswith("_")
    }
    try:
        tree = encode(dict(list(attrs.items())[:MAX_ATTRIBUTES]))
    except Exception:
        return None
    return [module, qualname, tree]


def made(kin: Any, base: type, args: tuple[Any, ...], decode: Callable[[Any], Any]) -> Any:
    """In the child: the exception `describe` named, with ``args`` (None
    where ``kin`` names none)."""
    if _type(kin) is not list or _len(kin) != 3 or _type(kin[0]) is not str:
        return None
    cls = _class(kin[0], kin[1], base)
    try:
        exc = base(*args) if cls is None else cls.__new__(cls)
        exc.args = args
    except Exception:
        return None
    attrs = decode(kin[2])
    if _type(attrs) is dict:
        for k, v in list(attrs.items())[:MAX_ATTRIBUTES]:
            if _type(k) is str and not k.startswith("_"):
                try:
                    setattr(exc, k, v)
                except Exception:
                    pass
    return exc


def _class(module: str, qualname: Any, base: type) -> Any:
    """The program's own class of that name, from a module it imported."""
    found: Any = sys.modules.get(module)
    if found is None or _type(qualname) is not str:
        return None
    for part in qualname.split(".")[:8]:
        found = getattr(found, part, None)
    if not _isinstance(found, type) or not _issubclass(found, base):
        return None
    return found if getattr(found, "__module__", None) == module else None
