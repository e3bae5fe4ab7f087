"""What the candidate prints while the child serves a request: kept, within
a budget, for the next message to the verifier, which writes it to the
test's ``sys.stdout`` and ``sys.stderr`` of that moment.

Runs in the candidate's child; binds the builtins it uses at import.
"""

from __future__ import annotations

import io

_len = len
_type = type


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
