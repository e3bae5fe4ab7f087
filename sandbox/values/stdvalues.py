"""The standard-library kinds a strict job's values cross as (datetime and
numpy values, rebuilt by their own constructors), the builtin value of a
subclass of a builtin type (`AS_BASE`), and the bounds every value tree
keeps (see `wire`)."""

from __future__ import annotations

import builtins
import datetime
import ipaddress
import logging
import pathlib
import re
import subprocess
import sys
import uuid
import zoneinfo
from typing import Any

from . import logrecords

MAX_DEPTH = 100
MAX_NODES = 4_000_000
"""Items of one value in all: a 1000 x 1000 grid (a LeetCode-style bound)
and then some; the message size cap and the verifier's memory and CPU
ceilings bound what the rest could cost."""
MAX_INT_BITS = 1 << 20
MAX_SAME_HASH = 64
NUMPY_KINDS = "biufcUS"
"""numpy dtype kinds rebuilt as values (bool, ints, floats, complex, text)."""

_type = type
_len = len
_isinstance = isinstance
_flags = type.__dict__["__flags__"].__get__
_mro = type.__dict__["__mro__"].__get__
_HEAPTYPE = 1 << 9

BUILTIN_TYPES: dict[str, type] = {
    t.__name__: t
    for t in (
        *(bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set),
        *(frozenset, range, slice, object, type, _type(None)),
        *(
            c
            for c in vars(builtins).values()
            if _isinstance(c, type) and issubclass(c, BaseException)
        ),
    )
}
"""Builtin classes (exceptions too), which cross by name as each side's own
class: a test passes ``int`` for ``isinstance(x, t)`` or ``KeyError`` for an
``except`` clause, a candidate returns ``type(x)`` for ``== int``."""
TYPE_NAMES = {id(t): name for name, t in BUILTIN_TYPES.items()}


class NotData(Exception):
    """A tree that does not describe a value (malformed, too large, refused)."""


UNSENT = "<not sent>"
"""The name the child gives, in place of an exception's, to a value of its
that did not cross (`NotData` on its side): one program would have passed
it on, so the check cannot go on as that program would."""


def check_hashes(items: list[Any]) -> list[Any]:
    """``items``, unless more than `MAX_SAME_HASH` share one hash value
    (building a set or dict of them would take quadratic time)."""
    if _len(items) <= MAX_SAME_HASH:
        return items
    counts: dict[int, int] = {}
    for item in items:
        h = hash(item)
        n = counts[h] = counts.get(h, 0) + 1
        if n > MAX_SAME_HASH:
            raise NotData("too many items with the same hash value")
    return items


def surrogate_text(body: bytes) -> str:
    """A string UTF-8 cannot carry (it holds a lone surrogate), from the
    ``surrogatepass`` bytes it crossed as."""
    try:
        return body.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise NotData("malformed string") from None


AS_BASE: tuple[tuple[type, Any], ...] = (
    (bool, lambda v: int.__int__(v) != 0),
    (int, int.__int__),
    (float, float.__float__),
    (complex, lambda v: complex(complex.__getattribute__(v, "real"), v.imag)),
    (str, str.__str__),
    (bytes, bytes.__bytes__),
    (bytearray, lambda v: bytearray(bytearray.__iter__(v))),
    (tuple, lambda v: tuple(tuple.__iter__(v))),
    (list, lambda v: list(list.__iter__(v))),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
    (set, lambda v: set(set.__iter__(v))),
    (dict, lambda v: dict(dict.items(v))),
)
"""The builtin value of a subclass of a builtin type, read with the builtin
type's own methods (whatever the subclass overrides stays out of it)."""


TIMES = (datetime.date, datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone)
BY_TEXT: dict[str, type] = {
    t.__name__: t
    for t in (
        *(pathlib.PurePosixPath, pathlib.PosixPath, pathlib.PureWindowsPath, uuid.UUID),
        *(ipaddress.IPv4Address, ipaddress.IPv6Address, ipaddress.IPv4Network),
        *(ipaddress.IPv6Network, ipaddress.IPv4Interface, ipaddress.IPv6Interface),
    )
}
"""Standard value types that are their text: rebuilt from ``str()`` by
their own constructor (a path, a UUID, an IP address or network)."""
_TEXT_NAMES = {t: name for name, t in BY_TEXT.items()}
_Pattern = re.Pattern
_Completed = subprocess.CompletedProcess
_LogRecord = logging.LogRecord
"""A finished process's record (what a test's patched ``subprocess.run``
returns): its arguments, return code and output, rebuilt as values."""
STANDARD = frozenset(
    {*TIMES, zoneinfo.ZoneInfo, *BY_TEXT.values(), slice, _Pattern, _Completed, _LogRecord}
)
STANDARD_KINDS = frozenset(
    {"timedelta", "timezone", "date", "time", "datetime", "zone", "text", "slice", "regex"}
    | {"completed", "logrecord"}
)
MAX_TEXT = 4096
"""Characters of a path (and of a zone's key)."""
MAX_PATTERN = 100_000
"""Characters (or bytes) of a compiled regular expression's pattern."""
_compile = re.compile
_slice = slice
_datetime, _date, _time = datetime.datetime, datetime.date, datetime.time
_timedelta, _timezone = datetime.timedelta, datetime.timezone
"""Bound at import: a test that patches ``datetime.datetime`` with
``unittest.mock`` replaces the module's attribute, not these."""


def standard_tree(v: Any, t: type, codec: Any, depth: int) -> object | None:
    """A standard value's tree, or None where it stays an object."""
    name = _TEXT_NAMES.get(t)
    if name is not None:
        return ["x", "text", name, codec.encode(str(v), depth + 1)]
    if t is zoneinfo.ZoneInfo:
        return _zone_tree(v)
    if t is _slice:
        return ["x", "slice", *(codec.encode(x, depth + 1) for x in (v.start, v.stop, v.step))]
    if t is _Pattern:
        if _len(v.pattern) > MAX_PATTERN:
            return None
        return ["x", "regex", v.pattern, v.flags]
    if t is _Completed:
        fields = (v.args, v.returncode, v.stdout, v.stderr)
        return ["x", "completed", *(codec.encode(x, depth + 1) for x in fields)]
    if t is _LogRecord:
        return logrecords.tree(v, codec, depth)
    return time_tree(v, t, codec, depth)


def standard_value(t: list[Any], codec: Any, depth: int) -> Any:
    if t[1] == "zone":
        return _zone(t)
    if t[1] == "slice" and _len(t) == 5:
        return _slice(*(codec.decode(x, depth + 1) for x in t[2:]))
    if t[1] == "regex":
        return _regex(t)
    if t[1] == "completed" and _len(t) == 6:
        return _Completed(*(codec.decode(x, depth + 1) for x in t[2:]))
    if t[1] == "logrecord":
        return logrecords.value(t, codec, depth, NotData)
    if t[1] != "text":
        return time_value(t)
    if _len(t) != 4 or _type(t[2]) is not str or t[2] not in BY_TEXT:
        raise NotData("malformed standard value")
    text = codec.decode(t[3], depth + 1)
    if _type(text) is not str or _len(text) > MAX_TEXT:
        raise NotData(f"malformed {t[2]}")
    try:
        return BY_TEXT[t[2]](text)
    except (ValueError, TypeError):
        raise NotData(f"malformed {t[2]}") from None


def _regex(t: list[Any]) -> Any:
    """A compiled pattern, compiled again from its pattern and flags (the
    ones ``re`` sets itself, ``re.UNICODE`` for a str, included)."""
    if _len(t) != 4 or _type(t[2]) not in (str, bytes) or _type(t[3]) is not int:
        raise NotData("malformed regular expression")
    if _len(t[2]) > MAX_PATTERN:
        raise NotData("regular expression too long")
    try:
        return _compile(t[2], t[3])
    except (re.error, ValueError, TypeError, OverflowError, RecursionError):
        raise NotData("malformed regular expression") from None


def _zone_tree(tz: Any) -> object | None:
    """An IANA zone by its key (a zone read from a file, with no key, stays
    an object)."""
    key = tz.key
    return ["x", "zone", key] if _type(key) is str and _len(key) <= 256 else None


def _zone(t: Any) -> Any:
    if _type(t) is list and _len(t) == 3 and t[1] == "zone" and _type(t[2]) is str:
        try:
            return zoneinfo.ZoneInfo(t[2])
        except (ValueError, OSError):  # no such zone here, or a malformed key
            raise NotData("unknown time zone") from None
    return time_value(t, "timezone")


def time_tree(v: Any, t: type, codec: Any, depth: int) -> object | None:
    """A datetime value as plain numbers (its tzinfo a fixed-offset
    ``timezone``, an IANA zone or none; any other tzinfo stays an object
    of its side's)."""
    if t is _timedelta:
        return ["x", "timedelta", v.days, v.seconds, v.microseconds]
    if t is _timezone:
        args = v.__getinitargs__()
        name = args[1] if _len(args) > 1 else None
        return ["x", "timezone", time_tree(args[0], _timedelta, codec, depth), name]
    if t is _date:
        return ["x", "date", v.year, v.month, v.day]
    tz = v.tzinfo
    if _type(tz) is zoneinfo.ZoneInfo:
        zone = _zone_tree(tz)
        if zone is None:
            return None
    elif tz is not None and _type(tz) is not _timezone:
        return None
    else:
        zone = None if tz is None else time_tree(tz, _timezone, codec, depth)
    clock = [v.hour, v.minute, v.second, v.microsecond, zone, v.fold]
    if t is _time:
        return ["x", "time", *clock]
    return ["x", "datetime", v.year, v.month, v.day, *clock]


TIME_FIELDS = {"timedelta": 3, "timezone": 2, "date": 3, "time": 6, "datetime": 9}


def time_value(t: Any, want: str | None = None) -> Any:
    """A datetime value from its tree (a timezone's offset a timedelta, a
    clock's zone a timezone or none): built by the type's own constructor."""
    if _type(t) is not list or _len(t) < 2 or t[0] != "x" or _type(t[1]) is not str:
        raise NotData("malformed datetime value")
    kind, fields = t[1], t[2:]
    if TIME_FIELDS.get(kind) != _len(fields) or (want is not None and kind != want):
        raise NotData(f"malformed {kind}")
    try:
        if kind == "timezone":
            offset, name = time_value(fields[0], "timedelta"), fields[1]
            if name is None:
                return _timezone(offset)
            if _type(name) is not str:
                raise NotData("malformed timezone")
            return _timezone(offset, name)
        if kind in ("time", "datetime"):
            numbers, zone, fold = fields[:-2], fields[-2], fields[-1]
            tz = None if zone is None else _zone(zone)
            if not all(_type(x) is int for x in [*numbers, fold]):
                raise NotData(f"malformed {kind}")
            if kind == "time":
                return _time(*numbers, tzinfo=tz, fold=fold)  # type: ignore[misc]
            return _datetime(*numbers, tzinfo=tz, fold=fold)  # type: ignore[misc]
        if not all(_type(x) is int for x in fields):
            raise NotData(f"malformed {kind}")
        if kind == "date":
            return _date(*fields)
        return _timedelta(days=fields[0], seconds=fields[1], microseconds=fields[2])
    except (ValueError, TypeError, OverflowError):
        raise NotData(f"malformed {kind}") from None


def numpy_of(t: type) -> Any:
    """numpy, when ``t`` is one of its own (compiled) types and numpy is
    already imported. A class of the program's is never one, whatever
    module it names: only compiled code makes a type that is not a heap
    type, and numpy's are such types."""
    if getattr(t, "__module__", None) != "numpy" or _flags(t) & _HEAPTYPE:
        return None
    return sys.modules.get("numpy")


def numpy_tree(np: Any, v: Any, t: type, codec: Any, depth: int) -> object | None:
    if t.__name__ == "ndarray":  # numpy's own (`numpy_of`), not a name it binds
        if v.dtype.kind not in NUMPY_KINDS or v.size > MAX_NODES:
            return None
        flat = [codec.encode(x, depth + 1) for x in v.ravel().tolist()]
        return ["x", "nd", v.dtype.str, [int(n) for n in v.shape], flat]
    generic = any(c.__name__ == "generic" and c.__module__ == "numpy" for c in _mro(t))
    if generic and v.dtype.kind in NUMPY_KINDS:
        return ["x", "np", v.dtype.str, codec.encode(v.item(), depth + 1)]
    return None


def numpy_value(t: list[Any], codec: Any, depth: int) -> Any:
    import numpy as np  # only when the other side sent a numpy value

    if _type(t[2]) is not str or _len(t[2]) > 16:
        raise NotData("malformed numpy dtype")
    try:
        dtype = np.dtype(t[2])
    except TypeError:
        raise NotData("malformed numpy dtype") from None
    if dtype.kind not in NUMPY_KINDS:
        raise NotData("numpy dtype not rebuilt")
    if t[1] == "np" and _len(t) == 4:
        return dtype.type(codec.decode(t[3], depth + 1))
    if t[1] == "nd" and _len(t) == 5 and _type(t[3]) is list and _type(t[4]) is list:
        shape = t[3]
        if not all(_type(n) is int and n >= 0 for n in shape) or _len(shape) > 32:
            raise NotData("malformed numpy shape")
        flat = [codec.decode(x, depth + 1) for x in t[4]]
        try:
            return np.array(flat, dtype=dtype).reshape(shape)
        except (ValueError, TypeError, OverflowError):
            raise NotData("malformed numpy array") from None
    raise NotData("malformed numpy value")
