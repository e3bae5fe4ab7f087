"""What the candidate prints and logs while it serves requests, passed on
to the test's current streams and loggers within one budget a check (the
child keeps to it too). Past it, what the test looks for (or must not
find) may be gone, so the check fails with that reason whatever the test
does after."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator

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

    @contextlib.contextmanager
    def redirected(self, capture: object) -> Iterator[list[str]]:
        """While the test's code answers a call from the candidate's code
        that replaced its stdout (``capture`` bit 1) or stderr (bit 2) with
        its own stream (`protocol.Op.capture`): what the test's code prints
        there, for the reply (``[out, err]``, within the budget), so it
        reaches the candidate's stream as in one program."""
        back = ["", ""]
        if type(capture) is not int or not capture & 3:
            yield back
            return
        saved = sys.stdout, sys.stderr
        bufs = [io.StringIO() if capture & bit else None for bit in (1, 2)]
        sys.stdout, sys.stderr = bufs[0] or saved[0], bufs[1] or saved[1]
        try:
            yield back
        finally:
            sys.stdout, sys.stderr = saved
            for i, buf in enumerate(bufs):
                text = buf.getvalue() if buf is not None else ""
                back[i] = text[: max(self.budget, 0)]
                self.budget -= len(text)
            if self.budget < 0:
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
