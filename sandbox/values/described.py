"""How a strict job's child describes its own objects to the verifier:
the program's own names, a handle's flags, builtin base and name, an
instance's attributes, a builtin subclass's value, an exception as a tree.

Runs in the candidate's child; like `serve`, it binds the builtins it uses
at import, before any candidate code runs.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

from . import protocols, realclasses, stdbases, stdexc, wire

CALLABLE, ITERATOR, ITERABLE, DEFAULT_EQ, DEFAULT_HASH, ALWAYS_TRUE, EXC_CLASS, IS_CLASS = (
    1,
    2,
    4,
    8,
    16,
    32,
    64,
    128,
)
ORDERS, CONTAINS, COROUTINE, GENERATOR, ASYNC_ITERABLE = 256, 512, 1024, 2048, 4096
"""The handle flags of `handles` (kept in step by a test)."""
_BUILTIN_BASES = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    bytearray,
    tuple,
    list,
    dict,
    set,
    frozenset,
)
_type = type
_str = str
_getattr = getattr
_hasattr = hasattr
_isinstance = isinstance
_issubclass = issubclass
_callable = callable
_object_eq = object.__eq__
_ORDERINGS = ("__lt__", "__le__", "__gt__", "__ge__")
_CoroutineType = types.CoroutineType
_GeneratorType = types.GeneratorType
_object_hash = object.__hash__
_OSError = OSError
_BaseException = BaseException
_Exception = Exception
_len = len
_id = id
_FunctionType = types.FunctionType
_mro = type.__dict__["__mro__"].__get__
_bases = type.__dict__["__bases__"].__get__
_builtin_name = realclasses.builtin_name
standard_bases = stdbases.named
"""The standard classes an object's class derives from (`stdbases`)."""
_standard = realclasses.standard
"""A class's own bases and order, read from the type's slots: a metaclass's
``__mro__`` or ``__bases__`` property cannot make a class seem to derive
from ``ValueError`` or the prompt's exception."""


def flags(v: Any) -> int:
    t = _type(v)
    flags = 0
    if _callable(v):
        flags |= CALLABLE
    if _hasattr(t, "__next__") and _type(_getattr(t, "__iter__", None)) is not _FunctionType:
        flags |= ITERATOR  # its own iterator: an ``__iter__`` of the program's may not be
    if _hasattr(t, "__iter__"):
        flags |= ITERABLE
    if _getattr(t, "__eq__", None) is _object_eq:
        flags |= DEFAULT_EQ
    if _getattr(t, "__hash__", None) is _object_hash:
        flags |= DEFAULT_HASH
    if not _hasattr(t, "__bool__") and not _hasattr(t, "__len__"):
        flags |= ALWAYS_TRUE
    if _hasattr(t, "__contains__"):
        flags |= CONTAINS
    if any(_getattr(t, n, None) is not _getattr(object, n) for n in _ORDERINGS):
        flags |= ORDERS
    if _type(v) is _CoroutineType:
        flags |= COROUTINE
    if _type(v) is _GeneratorType:
        flags |= GENERATOR
    if _hasattr(t, "__aiter__") or _hasattr(t, "__anext__"):
        flags |= ASYNC_ITERABLE
    if _isinstance(v, type):
        flags |= IS_CLASS | DEFAULT_EQ | DEFAULT_HASH | ALWAYS_TRUE
        if _issubclass(v, _BaseException):
            flags |= EXC_CLASS
    return flags | protocols.bits(v)


def base(v: Any) -> str:
    if _isinstance(v, type):
        if _issubclass(v, _BaseException):
            for c in _mro(v):
                name = _builtin_name(c)
                if name is not None:
                    return name
        return ""
    for b in _BUILTIN_BASES:
        if _isinstance(v, b):
            return b.__name__
    return ""


def known_name(v: object, scope: dict[str, object]) -> str:
    """The class name the verifier knows ``v`` by; a class of the
    program's renamed after another the program binds under that name
    (``__qualname__ = "Point"`` on a local class) is not taken for it."""
    found = name(v)
    bound = scope.get(found)
    cls = v if _isinstance(v, type) else _type(v)
    if bound is not None and bound is not cls and _isinstance(bound, type):
        return f"{found} (a class of the same name)"
    return found


def exception_bases(cls: type, foreign: Callable[[object], object]) -> list[object]:
    """The direct bases of an exception class of the program's: a
    builtin's name, or what ``foreign`` makes of a class of the program's."""
    out: list[object] = []
    for base in _bases(cls)[:8]:
        found = _builtin_name(base)
        if found is not None:
            out.append(found)
        elif _issubclass(base, _BaseException):
            out.append(foreign(base))
    return out


def name(v: object) -> str:
    t = v if _isinstance(v, type) else _type(v)
    return _str(_getattr(t, "__qualname__", "object"))[:200]


def as_base(v: object) -> object:
    for base, read in wire.AS_BASE:
        if _isinstance(v, base):
            return read(v)
    raise TypeError("not a builtin value")


def state(v: object) -> dict[str, object]:
    """An instance's attributes (its ``__dict__``, or its slots)."""
    found = _getattr(v, "__dict__", None)
    if _type(found) is dict:
        return dict(found)
    out: dict[str, object] = {}
    for cls in _mro(_type(v)):
        for slot in _getattr(cls, "__slots__", ()):
            if _hasattr(v, slot):
                out[slot] = _getattr(v, slot)
    return out


MAX_CAUSES = 8
"""Links of an exception's ``__cause__`` chain that cross with it."""


class Raised:
    """One exception tree's numbering: its exceptions by identity, so one
    met twice (``e.__cause__`` that is also ``e.last``, a group's member)
    is one object on the other side too; and the test's own exceptions
    (``origins``: id to the exception and the test's number for it)."""

    def __init__(self, origins: dict[int, tuple[BaseException, int]]) -> None:
        self.seen: dict[int, tuple[BaseException, int]] = {}
        self.origins = origins


def exception_tree(
    exc: BaseException, codec: wire.Codec, raised: Raised | None = None, depth: int = 0
) -> object:
    """``["e", type, base, class, args, attributes, text, cause, n]``: the
    cause (``raise ... from``) is an exception's tree too, or None; ``n``
    numbers it in ``raised``, and an exception met again is ``["e", "@",
    n]``. The test's own exception is ``["v", id]``, or, where the
    candidate gave it attributes, notes or a cause, ``["e", "@v", id,
    attributes, cause, None]``."""
    raised = raised or Raised({})
    back = raised.origins.get(_id(exc))
    if back is not None and back[0] is exc:  # the test's own: one object already
        attrs = exception_extra(exc, codec)[0]
        cause = _cause_tree(exc, codec, raised, depth)
        if attrs is None and cause is None:
            return ["v", back[1]]
        return ["e", "@v", back[1], attrs, cause, None]
    known = raised.seen.get(_id(exc))
    if known is not None and known[0] is exc:
        return ["e", "@", known[1]]
    n = _len(raised.seen)
    raised.seen[_id(exc)] = (exc, n)
    t = _type(exc)
    try:
        args = codec.encode(exc.args)
    except _BaseException:
        args = ["t", [reason(exc)]]
    extra = exception_extra(exc, codec)  # in the order the verifier rebuilds
    extra += [_cause_tree(exc, codec, raised, depth), n]
    name = _builtin_name(t)
    if name is not None:
        return ["e", name, "", None, args, *extra]
    home = _standard(t)
    if home is not None:  # a standard module's class, by identity
        cls_tree: object = ["s", home[0][:200], home[1][:200]]
        return ["e", home[1].rpartition(".")[2][:100], base(t), cls_tree, args, *extra]
    try:
        cls_tree = codec.encode(t)
    except _BaseException:
        return ["e", "Exception", "", None, args, None, None, None, n]
    return ["e", _str(t.__name__)[:100], base(t), cls_tree, args, *extra]


def _cause_tree(exc: BaseException, codec: wire.Codec, raised: Raised, depth: int) -> object:
    """The tree of ``exc.__cause__`` (``raise ... from``), or None."""
    cause: Any = _getattr(exc, "__cause__", None)
    if _isinstance(cause, _BaseException) and depth < MAX_CAUSES:
        return exception_tree(cause, codec, raised, depth + 1)
    return None


def exception_extra(exc: BaseException, codec: wire.Codec) -> list[object]:
    """``[attributes, text]``: the exception's own attributes (its
    ``__dict__``, which a program's exception class fills in ``__init__``,
    its ``__notes__`` and an OSError's file names, which are not among its
    arguments), and ``str(exc)`` where its class (not a builtin) overrides
    ``__str__``."""
    try:
        found = _getattr(exc, "__dict__", None)
        attrs = {
            k: v
            for k, v in (found.items() if _type(found) is dict else ())
            if _type(k) is str and (not k.startswith("__") or k == "__notes__")
        }
        if _isinstance(exc, _OSError):
            for k in ("filename", "filename2"):
                if _type(_getattr(exc, k, None)) is str:
                    attrs[k] = _getattr(exc, k)
            if "filename" not in attrs:  # named by the error it was raised handling
                attrs.update(_context_paths(exc))
        tree = codec.encode(attrs) if attrs else None
    except _BaseException:
        tree = None
    text = None
    try:
        for c in _mro(_type(exc)):
            if "__str__" in c.__dict__:
                if _builtin_name(c) is None:
                    text = _str(exc)[:10_000]
                break
    except _BaseException:
        text = None
    return [tree, text]


def _context_paths(exc: BaseException) -> dict[str, list[str]]:
    """``{"__paths__": [...]}``: the file names of the ``OSError`` that
    ``exc`` (an ``OSError`` with none of its own) was raised while handling
    (``shutil.move`` copying a file it could not rename), for the verifier
    to name the file a refusal was about; a name no attribute takes."""
    at = exc.__context__
    for _ in range(4):
        if at is None:
            break
        if _isinstance(at, _OSError):
            found = [_getattr(at, k, None) for k in ("filename", "filename2")]
            names: list[str] = [n for n in found if _type(n) is str]
            if names:
                return {"__paths__": names}
        at = at.__context__
    return {}


def reason(exc: BaseException) -> str:
    try:
        text = f"{_type(exc).__name__}: {_str(exc)}"
    except _BaseException:
        text = "exception"
    return text[:500]


def rebuild_exception(t: list[Any], peer: Any) -> BaseException:
    """An exception the test's code raised, as the candidate sees it (a
    builtin of its type or nearest builtin base). ``peer.origins`` keeps
    which of the test's objects it is: raised on out of a request, it goes
    back as that object (`serve._Peer`), as the test's own class."""
    cls: Any = realclasses.builtin(t[1])
    if not (_isinstance(cls, type) and _issubclass(cls, _Exception)):
        cls = _Exception
    args = peer.codec().decode(t[4])
    exc = stdexc.made(t[3], cls, tuple(args), peer.codec().decode)
    try:
        exc = cls(*args) if exc is None else exc
    except _BaseException:
        exc = _Exception(*args)
    if _len(t) == 6 and _type(t[5]) is int:
        peer.origins[_id(exc)] = (exc, t[5])
    return exc  # type: ignore[no-any-return]


def defined(scope: dict[str, object]) -> list[tuple[str, object]]:
    """The functions and classes the program itself made (not ones it imported)."""
    out = []
    value: Any
    for name, value in list(scope.items()):
        if name.startswith("__"):
            continue
        inner = value
        for _ in range(8):  # through functools.wraps / lru_cache layers
            wrapped = _getattr(inner, "__wrapped__", None)
            if wrapped is None:
                break
            inner = wrapped
        if _type(inner) is _FunctionType:
            if _getattr(inner.__code__, "co_filename", "") == "<candidate>":
                out.append((name, value))
        elif _isinstance(value, type) and made_here(value):
            out.append((name, value))
    return out


def made_here(cls: type) -> bool:
    """Did the program make this class? Its class statements name the module
    ``builtins`` (the program runs in globals with no ``__name__``); a
    ``namedtuple`` call names ``__main__``. A class importable under its
    name from that module is not the program's."""
    module = _getattr(cls, "__module__", "")
    if module not in ("builtins", "__main__"):
        return False
    if module == "builtins":
        return _builtin_name(cls) is None
    home = sys.modules.get(module)
    return _getattr(home, _str(_getattr(cls, "__name__", "")), None) is not cls
