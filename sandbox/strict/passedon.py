"""What the candidate prints and logs while it serves requests, passed on
to the test's current streams and loggers within one budget a check (the
child keeps to it too). Past it, what the test looks for (or must not
find) may be gone, so the check fails with that reason whatever the test
does after."""

from __future__ import annotations

import sys

from ..process.childio import OUTPUT_BUDGET
from ..values import logtap
from .outcomes import told


class PassedOn:
    def __init__(self) -> None:
        self.budget = OUTPUT_BUDGET

    def emit(self, out: object, err: object) -> None:
        """What the candidate printed, to the test's ``sys.stdout`` and
        ``sys.stderr`` of this moment."""
        for text, stream in ((out, sys.stdout), (err, sys.stderr)):
            if type(text) is str and text and self.budget > 0:
                kept = text[: self.budget]
                self.budget -= len(kept)
                try:
                    stream.write(kept)
                except Exception:
                    pass
        if self.budget <= 0:
            _cut()

    def records(self, records: object) -> None:
        """The child's log records, to the test's loggers (`logtap.emit`)."""
        used, whole = logtap.emit(records, self.budget)
        self.budget -= used
        if not whole:
            _cut()


def _cut() -> None:
    told(
        f"strict scoring passes on at most {OUTPUT_BUDGET} characters and "
        f"{logtap.MAX_RECORDS} log records at a time of what the candidate prints "
        "and logs, and it wrote more"
    )
