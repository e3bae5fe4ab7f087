"""The candidate's function as ``unittest.mock``'s autospec reads it.

``mock.patch.object(Gateway, "charge", autospec=True)`` on a class of the
program's specs the mock from ``Gateway.charge``, which the verifier holds
as a handle: not a function, so ``create_autospec`` would make a mock that
does not bind and takes the first argument for ``self`` already given.
In one program it makes a function with the method's signature, which
Python binds on the class (the side effect gets the instance first, as
``call_args`` records). `prepare` has ``create_autospec`` read such a
handle as a function of that signature (read in the child with
``inspect``, rebuilt here from data); the function is only a spec, never
called, so nothing of the candidate's runs here. Set on the class, the
autospec'd function binds there (`process.methods`).
"""

from __future__ import annotations

import functools
from typing import Any

from ..values import signature
from .handles import Handle

_FUNCTION = "function"
"""The class name a handle on a plain function of the program's has."""


def prepare() -> None:
    """Once per process: ``create_autospec`` reads handles on functions
    as functions."""
    from unittest import mock

    made: Any = mock.create_autospec
    if getattr(made, "_aioeval_specs", False):
        return

    @functools.wraps(made)
    def create_autospec(spec: Any, *args: Any, **kwargs: Any) -> Any:
        return made(as_function(spec), *args, **kwargs)

    create_autospec._aioeval_specs = True  # type: ignore[attr-defined]
    mock.create_autospec = create_autospec  # type: ignore[assignment]


def as_function(spec: Any) -> Any:
    """A function of ``spec``'s signature where ``spec`` is a handle on a
    function of the program's; else ``spec``."""
    if not isinstance(spec, Handle):
        return spec
    if object.__getattribute__(spec, "_name") != _FUNCTION:
        return spec
    try:
        found = signature.build(spec._ask("signature"))
    except (ValueError, TypeError):
        return spec

    def fn(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a spec only")  # autospec never calls its spec

    fn.__signature__ = found  # type: ignore[attr-defined]
    fn.__name__ = fn.__qualname__ = str(spec.__name__)[:200]
    return fn
