"""The test's process state that the candidate's code reads, handed to the
child before a request whenever the test changed it (the ``world`` op):
the environment variables the test set or removed since the check began
(with ``TZ``, the child's ``time.tzset()``), the ``decimal`` context, the
int digit limit, the recursion limit, its loggers' levels, the working
directory, the warning filters (`warntap`), the umask, the interpreter
settings of `settings` (the ``csv`` field size limit, the garbage
collector, ``logging.disable``, the socket default timeout), its
``unittest.mock`` patches (`patches`) and the names it assigns
(`assigned`).

Only this way, as with ``random``: what the candidate's code changes stays
in its process. The verifier reads the state before each request; a read
is a few comparisons, and a change costs one round trip before the request.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from . import assigned, logtap, patches, settings, warntap

_DECIMAL_FIELDS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")
REF = -2
"""The ``world`` op's ``ref``: no object of either side."""
MAX_ENV = 4096
"""Environment variables handed over at once (and characters of each)."""


def _decimal(fresh: bool = False) -> list[Any] | None:
    """The test's decimal context as plain fields, if it imported decimal
    (``fresh``: a new thread's context, the one the child starts with)."""
    module = sys.modules.get("decimal")
    if module is None:
        return None
    ctx = module.Context() if fresh else module.getcontext()
    traps = sorted(t.__name__ for t, on in ctx.traps.items() if on)
    return [*(getattr(ctx, f) for f in _DECIMAL_FIELDS), traps]


def _environ() -> dict[bytes, bytes]:
    return dict(_ENV_DATA)


_ENV_DATA: dict[bytes, bytes] = getattr(os.environ, "_data", {})
"""The environment's own dict (bytes on POSIX): compared without a copy."""


def prepare() -> None:
    """Once per process, before any check: watch the test's patches."""
    patches.watch()


class World:
    """The verifier's view: what it last handed to the child. ``attributes``:
    the attribute names the test's code assigns (`assigned`)."""

    def __init__(self, attributes: set[str] | None = None, names: set[str] | None = None) -> None:
        self.assigned = assigned.Assigned(attributes or set())
        self.names = names or set()
        """The global and attribute names the test's code reads."""
        used = _SETTERS.keys() if names is None else names & _SETTERS.keys()
        self.readers = tuple(_SETTERS[n] for n in sorted(used))
        """Reads of the state only a call the test's code names can change
        (``os.chdir``, ``os.umask``): a system call each, made on every
        request only where it may matter."""
        self.env = self.start_env = _environ()
        self.handed: dict[bytes, bytes] = {}
        """The variables last handed over as set (to unset them again)."""
        now = self._values()
        self.values = self.start = (_decimal(fresh=True), _DIGITS, *now[2:])
        """What the child starts with (the interpreter's own decimal
        context and digit limit, whatever an earlier test left here)."""
        patches.watch()
        self.patched: list[tuple[str, str, int]] = []
        """The test's patches as last handed over (by the value's identity)."""
        self.start_cwd = _cwd() or ""
        """The shared directory the check starts in."""
        self.touched: set[int] = set()
        """Which of `_values` were handed over once (then always are: the
        child keeps what it was last told)."""

    def sync(self, put: Any) -> None:
        """The state is what the child has (it handed it back: `mirror`):
        nothing to hand over again, and the variables it set are the child's
        to unset when the test removes them."""
        self.env, self.values = _environ(), self._values()
        if type(put) is dict:
            self.handed.update({str(k).encode("utf-8", "surrogateescape"): b"" for k in put})

    def _values(self) -> tuple[Any, ...]:
        return _values(self.readers)

    def changes(self, encode: Callable[[Any], Any]) -> list[Any] | None:
        """The state to hand over, if the test changed it since it was last
        handed over (or since the check began), else None; a patch's value
        is encoded with ``encode`` (the session's codec)."""
        values = self._values()
        patched = patches.snapshot() if patches.ACTIVE else []
        patched += self.assigned.changed()
        ids = [(m, a, id(v)) for m, a, v in patched]
        if _ENV_DATA == self.env and values == self.values and ids == self.patched:
            return None
        self.env, self.values, self.patched = _environ(), values, ids
        start = self.start_env
        put = {_text(k): _text(v) for k, v in self.env.items() if start.get(k) != v}
        gone = [_text(k) for k in {**start, **self.handed} if k not in self.env]
        self.handed = {k: b"" for k in self.env if start.get(k) != self.env[k]}
        self.touched |= {i for i, v in enumerate(values) if v != self.start[i]}
        told = [v if i in self.touched else None for i, v in enumerate(values)]
        env = [dict(list(put.items())[:MAX_ENV]), gone[:MAX_ENV]]
        return [*env, *told, [[m, a, encode(v)] for m, a, v in patched]]


_DIGITS = sys.flags.int_max_str_digits if sys.flags.int_max_str_digits >= 0 else 4300
"""The interpreter's default int digit limit."""


def _values(readers: tuple[Callable[[], Any], ...]) -> tuple[Any, ...]:
    """The decimal context, the int digit limit, the recursion limit, the
    levels of the test's loggers, the warning filters, the working
    directory and the umask where ``readers`` reads them (else None), and
    the interpreter settings (`settings`)."""
    dec = _decimal() if "decimal" in sys.modules else None
    limits = sys.get_int_max_str_digits(), sys.getrecursionlimit()
    rest = [r() if r in readers else None for r in (_cwd, _umask)]
    return dec, *limits, logtap.levels(), warntap.filters(), *rest, settings.read()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the test removed it
        return None


def _text(raw: bytes) -> str:
    return raw[:MAX_ENV].decode("utf-8", "surrogateescape")


def apply(
    tree: Any, decode: Callable[[Any], Any], scope: dict[str, Any], tzset: bool = True
) -> None:
    """In the child: take the test's state (a malformed part is skipped:
    the tree comes from the trusted verifier, and a bad value only leaves
    the child's own state as it was); ``scope``: the program's globals.
    ``tzset``: a changed ``TZ`` takes effect, as the test's own
    ``time.tzset()`` after setting it made it; not for the candidate's
    ``TZ`` handed to the test (`mirror`), which one program's clock reads
    only once something calls ``tzset``."""
    if type(tree) is not list or len(tree) != 11:
        return
    put, gone, dec, digits, recursion, levels, caught, cwd, mask, told, patched = tree
    patches.apply(patched, decode, scope)
    if type(mask) is int and 0 <= mask <= 0o777:
        os.umask(mask)
    if told is not None:
        _quietly(settings.put, told)
    if caught is not None:
        warntap.set_filters(caught)
    if type(cwd) is str:  # the shared directory, or one the test made in it
        _quietly(os.chdir, cwd)
    if levels is not None:
        logtap.set_levels([list(item) for item in levels if type(item) in (list, tuple)])
    if type(put) is dict:
        for key, value in put.items():
            if type(key) is str and type(value) is str and key and "=" not in key:
                _quietly(os.environ.__setitem__, key, value)
    if type(gone) is list:
        for key in gone:
            if type(key) is str:
                os.environ.pop(key, None)
    if tzset and ((type(put) is dict and "TZ" in put) or (type(gone) is list and "TZ" in gone)):
        time.tzset()  # the test's time.tzset() after it set TZ
    if type(dec) is list and len(dec) == len(_DECIMAL_FIELDS) + 1:
        _set_decimal(dec)
    if type(digits) is int:
        _quietly(sys.set_int_max_str_digits, digits)
    if type(recursion) is int:
        _quietly(sys.setrecursionlimit, recursion)


def _set_decimal(fields: list[Any]) -> None:
    import decimal

    ctx = decimal.getcontext()
    for name, value in zip(_DECIMAL_FIELDS, fields, strict=False):
        _quietly(setattr, ctx, name, value)
    traps = fields[-1]
    if type(traps) is list:
        for signal in list(ctx.traps):
            ctx.traps[signal] = signal.__name__ in traps


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except (ValueError, TypeError, OverflowError, OSError, RuntimeError):
        pass


_SETTERS: dict[str, Callable[[], Any]] = {
    "chdir": _cwd,
    "fchdir": _cwd,
    "umask": _umask,
}
"""The names a test's code calls to change what each reader reads."""


def decimal_fields() -> list[Any] | None:
    """The decimal context as plain fields, if this process imported decimal."""
    return _decimal() if "decimal" in sys.modules else None


quietly = _quietly
