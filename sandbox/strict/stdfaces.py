"""The verifier's own standard classes for a handle's standard bases.

The child names the standard library classes its object derives from
(`values.stdbases`); here each becomes the verifier's class of that module
and qualified name, where the test or the prompt imported the module (no
module is imported for the child), and the handle's face derives from them
(`handlefaces.face`): ``isinstance(f, logging.Formatter)`` holds for the
program's ``MaskingFormatter(logging.Formatter)`` as in one program. The
handle stays a handle: what the test does with it still goes to the child.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from ..values import stdbases


def lookup(module: object, qualname: object) -> type | None:
    """The class ``module.qualname`` of a standard module the verifier has
    imported, read from the modules' own namespaces (no module's
    ``__getattr__`` runs), else None."""
    if type(module) is not str or type(qualname) is not str:
        return None
    if module.partition(".")[0] not in sys.stdlib_module_names:
        return None
    found: Any = sys.modules.get(module)
    for part in qualname.split(".")[:8] if found is not None else ():
        names = getattr(found, "__dict__", None)
        found = names.get(part) if isinstance(names, Mapping) else None
    if isinstance(found, type) and found.__module__ == module:
        return found
    return None


def resolve(tree: object) -> tuple[type, ...]:
    """The verifier's classes for the child's ``[[module, qualname], ...]``,
    nearest first, each left out where the verifier has no such class or it
    is an exception class (an exception crosses as one, never as a handle)."""
    if type(tree) is not list:
        return ()
    out: list[type] = []
    for item in tree[: stdbases.MOST]:
        if type(item) is list and len(item) == 2:
            found = lookup(item[0], item[1])
            if found is not None and not issubclass(found, BaseException) and found not in out:
                out.append(found)
    return tuple(out)


def bases(classes: tuple[type, ...]) -> tuple[type, ...]:
    """Of ``classes``, the ones no other of them derives from, in order: the
    bases a face takes so that its MRO holds them all."""
    return tuple(c for c in classes if not any(o is not c and issubclass(o, c) for o in classes))
