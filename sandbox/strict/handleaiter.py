"""A handle on the candidate's async iterator (an async generator it
returns), as ``async for`` in the test sees it.

Python looks ``__aiter__`` and ``__anext__`` up on the object's type, so a
handle on an object whose type has either is of this class. Each step is
a coroutine of the child's (the ``anext`` op), which crosses as a handle
on the candidate's coroutine: the test's event loop awaits it as any of
the candidate's coroutines (`handleasync`), the step runs in the
candidate's process, and the iterator's ``StopAsyncIteration`` ends the
loop, as in one program.
"""

from __future__ import annotations

from typing import Any

from .handles import KINDS, Handle


class AsyncIterHandle(Handle):
    # No docstring: ``__doc__`` is the program's object's, as a `Handle`'s.

    __slots__ = ()

    def __aiter__(self) -> Any:
        return self._ask("aiter")

    def __anext__(self) -> Any:
        return self._ask("anext")


KINDS.add(AsyncIterHandle)
