"""What the candidate prints while the child serves a request: kept, within
a budget, for the next message to the verifier, which writes it to the
test's ``sys.stdout`` and ``sys.stderr`` of that moment.

Runs in the candidate's child; binds the builtins it uses at import.
"""

from __future__ import annotations

import io
import sys
from typing import Any

_len = len
_type = type
_BaseException = BaseException


OUTPUT_BUDGET = 1 << 20
"""Characters of what the candidate prints while it serves requests that go
to the test's ``sys.stdout``/``sys.stderr`` (the rest is dropped)."""


class Output(io.StringIO):
    """The child's ``sys.stdout`` or ``sys.stderr`` while it serves a request:
    kept for the next message to the verifier, within a budget both share."""

    def __init__(self, budget: list[int]) -> None:
        super().__init__()
        self.budget = budget

    def write(self, text: str) -> int:
        n = _len(text) if _type(text) is str else 0
        if n and self.budget[0] > 0:
            kept = text[: self.budget[0]]
            self.budget[0] -= _len(kept)
            super().write(kept)
        elif not n:
            return super().write(text)  # a non-str raises as a real stream's does
        return n

    def take(self) -> str:
        if not self.tell():
            return ""  # the usual case: nothing printed
        text = self.getvalue()
        self.seek(0)
        self.truncate(0)
        return text


def redirected(out: Output, err: Output) -> int:
    """Which standard streams the candidate's code replaced with its own
    while it calls the test's code (`protocol.Op.capture`): neither the
    child's `Output` of the request nor the process's own stream."""
    return int(sys.stdout is not out and sys.stdout is not sys.__stdout__) | (
        int(sys.stderr is not err and sys.stderr is not sys.__stderr__) << 1
    )


def write_back(capture: int, reply: Any) -> None:
    """What the test's code printed in a call whose ``capture`` the child
    asked for, written to the candidate's streams that stood in place."""
    if capture & 1 and _type(reply.out) is str and reply.out:
        sys.stdout.write(reply.out)
    if capture & 2 and _type(reply.err) is str and reply.err:
        sys.stderr.write(reply.err)


def flush() -> None:
    """Flush Python's buffered stdout and stderr, whatever the candidate did to them."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except _BaseException:
            pass
