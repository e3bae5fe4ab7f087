"""In the child: the process state the verifier does not take from the
candidate (see `mirror`), watched so that a request pays for it only once
the candidate's code may have changed it.

The global ``random`` generator's state and the signal handlers are read
again only after a call of the module's functions (``random.shuffle``,
``signal.signal``: wrapped here, before the program loads, so a name the
program imports from them is the wrapped one); reading them costs tens of
microseconds, where a request costs about a hundred. ``sys.path`` is
compared on every answer (a tuple of a few strings).
"""

from __future__ import annotations

import random
import signal
import sys
from collections.abc import Callable
from typing import Any

from . import logfilters

_CALLED = {"random": True, "signal": True}
"""Whether the module's functions were called since the state was read."""
_random_state = random.getstate
_getsignal = signal.getsignal
_SIGNALS = tuple(int(s) for s in signal.Signals if s not in (signal.SIGKILL, signal.SIGSTOP))
_NAMES = {int(s): s.name for s in signal.Signals}


def _flagged(original: Callable[..., Any], key: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        _CALLED[key] = True
        return original(*args, **kwargs)

    call.__name__ = call.__qualname__ = original.__name__
    call.__doc__ = original.__doc__
    return call


def watch() -> None:
    """Wrap the functions of ``random`` (those of its global generator)
    and ``signal.signal``, and note the filters given to loggers
    (`logfilters`; once per process)."""
    logfilters.watch()
    if getattr(signal.signal, "__wrapped_held__", False):
        return
    for name in random.__all__:
        fn = getattr(random, name)
        if getattr(fn, "__self__", None) is random._inst:  # type: ignore[attr-defined]
            setattr(random, name, _flagged(fn, "random"))
    wrapped = _flagged(signal.signal, "signal")
    wrapped.__wrapped_held__ = True  # type: ignore[attr-defined]
    signal.signal = wrapped


def _handlers() -> tuple[Any, ...]:
    return tuple(_getsignal(s) for s in _SIGNALS)


class Held:
    """The state at the start of the check, and the generator's as the two
    sides last agreed on it."""

    def __init__(self) -> None:
        self.path = tuple(sys.path)
        self.handlers = _handlers()
        self.random = _random_state()
        self.left: set[str] = set()
        """The ``path`` and ``signal`` facts reported."""
        _CALLED["random"] = _CALLED["signal"] = False

    def agree_random(self) -> None:
        """After the test's ``random`` state was set here."""
        self.random = _random_state()
        _CALLED["random"] = False

    def facts(self, answering: bool) -> list[list[str]]:
        """The generator's state changed since the two sides last agreed
        (``["random", ""]``), and, once a call of the test's is answered,
        ``sys.path`` (``["path", "path"]``) or a signal's handler
        (``["signal", NAME]``) other than at the start, each told once (a
        call may change them while it calls back into the test's code and
        put them back before it answers)."""
        out = []
        if _CALLED["random"]:
            _CALLED["random"] = False
            now = _random_state()
            if now != self.random:
                out.append(["random", ""])
            self.random = now
        if not answering:
            return out
        left = set()
        if tuple(sys.path) != self.path:
            left.add("path")
        if _CALLED["signal"]:
            _CALLED["signal"] = False
            for sig, mine, first in zip(_SIGNALS, _handlers(), self.handlers, strict=True):
                if mine is not first:
                    left.add(_NAMES[sig])
        for name in sorted(left - self.left):
            out.append(["path" if name == "path" else "signal", name])
        self.left |= left
        return out
