"""Names a failure that comes from the candidate's object being a `Handle`
in the verifier, not from the candidate's answer: the test gave one to a
library function that needs the live object (``dataclasses.asdict``,
``json.dumps``), or used it in a way Python looks up on the
object's own type (``async for``, an operator the handle does not carry),
or the candidate's code did the same with the child's proxy of the
test's object.
Only the reason of a check that already failed is named; no verdict
changes."""

from __future__ import annotations

import re
import types
from typing import Any

from .handles import Handle, is_handle

_SANDBOX = __name__.rsplit(".", 2)[0]
"""The sandbox package: an exception raised in its frames (a handle
passing on the candidate's own error) is the candidate's, never named."""


def handle_use(exc: BaseException, test_module: str) -> str | None:
    """The named reason for ``exc`` if the test used a candidate's object
    in a way only the live object supports, else None (also when the
    traceback cannot be read: naming never costs a verdict)."""
    if isinstance(exc, RecursionError) and _nested(exc):
        return (
            "strict scoring: the test's code and the candidate's called each other so deep "
            "that the verifier's recursion limit ran out (each call between the two "
            "processes costs it several frames, where one program's costs one)"
        )
    if isinstance(exc, AssertionError) or not isinstance(exc, Exception):
        return None
    try:
        return _named(exc, _past_test(_frames(exc.__traceback__), test_module))
    except Exception:
        return None


def _named(exc: Exception, frames: list[types.FrameType]) -> str | None:
    if any(_module(f).startswith(_SANDBOX) for f in frames):
        if isinstance(exc, TypeError) and re.search(r"\bProxy\b", str(exc)):
            return (  # raised by the candidate's code, on the child's proxy
                "strict scoring: the candidate's code used one of the test's objects in a "
                "way Python asks of the object's own type (async for, an operator the "
                "proxy does not carry), which stays in the test's process"
            )
        return None
    if isinstance(exc, TypeError) and re.search(rf"\b\w*{Handle.__name__}\b", str(exc)):
        return (
            "strict scoring: the test used one of the candidate's objects in a way "
            "Python asks of the object's own type, which stays in the candidate's process"
        )
    for frame in frames:  # the first library call the test made holds its own handle
        name = _handle_in(frame.f_locals)
        if name is not None:
            return (
                f"strict scoring: the test gave the candidate's {name}object to "
                f"{_module(frame)}.{frame.f_code.co_name}, which needs the live object; "
                "it stays in the candidate's process"
            )
    return None


def _nested(exc: BaseException) -> bool:
    """Did the recursion run through the channel's own frames, many times?"""
    try:
        frames = _frames(exc.__traceback__)
    except Exception:
        return False
    return sum(_module(f).startswith(_SANDBOX) for f in frames) >= 50


def _past_test(frames: list[types.FrameType], test_module: str) -> list[types.FrameType]:
    """The frames below the test's own innermost one (library code it called)."""
    mine = [i for i, f in enumerate(frames) if _module(f) == test_module]
    return frames[mine[-1] + 1 :] if mine else []


def _frames(tb: types.TracebackType | None) -> list[types.FrameType]:
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def _module(frame: types.FrameType) -> str:
    name = frame.f_globals.get("__name__")
    return name if type(name) is str else "?"


def _handle_in(scope: dict[str, Any]) -> str | None:
    """The class name (and a space) of a handle among a frame's locals (or one level
    inside a tuple, list or dict of them: ``*args``, ``**kwargs``)."""
    for value in scope.values():
        items = value.values() if type(value) is dict else value
        inner = list(items) if type(value) in (tuple, list, dict) else []
        for item in [value, *inner[:32]]:
            if is_handle(item):
                return _name_of(item)
    return None


def _name_of(handle: Handle) -> str:
    """A handle's class name, read without asking the candidate (a copy
    ``copy.deepcopy`` half made has none)."""
    try:
        return str(object.__getattribute__(handle, "_name"))[:100] + " "
    except AttributeError:
        return ""
