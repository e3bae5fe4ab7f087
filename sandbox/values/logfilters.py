"""Filters the candidate's code gives a logger, which stay in its process.

A filter is the candidate's code, so the verifier never installs it. In the
child, `watch` notes each logger the candidate's code gives one (by name,
at most 8, for `mirror` to hand over as a fact). In the verifier,
`watch_filtered` marks that logger: a record of the test's own code on it
(not one of the candidate's that `logtap` passes on, which the filter saw
already) is one the filter would have judged in one program, so the check
fails with a reason that says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

FILTERED: list[str] = []
"""In the child: loggers the candidate's code gave a filter, not yet
handed over. In the verifier: the loggers so marked."""
EMITTING = [False]
"""In the verifier: whether `logtap` is passing on the candidate's record."""
_len = len


def watch() -> None:
    """In the child, before the program loads (once per process)."""
    add_filter = logging.Logger.addFilter
    if getattr(add_filter, "__watched__", False):
        return

    def add_a_filter(self: logging.Logger, fltr: Any) -> None:
        if _len(FILTERED) < 8 and self.name not in FILTERED:
            FILTERED.append(str(self.name)[:200])
        add_filter(self, fltr)

    add_a_filter.__watched__ = True  # type: ignore[attr-defined]
    logging.Logger.addFilter = add_a_filter  # type: ignore[method-assign,assignment]


def watch_filtered(name: str, told: Callable[[str], object]) -> None:
    """In the verifier: the candidate's code gave the logger ``name`` a
    filter; ``told`` gets the reason once the test's code logs to it."""
    if not FILTERED:
        handle = logging.Logger.handle

        def handled(self: logging.Logger, record: logging.LogRecord) -> None:
            if self.name in FILTERED and not EMITTING[0]:
                told(
                    f"strict scoring: the candidate's code gave the logger {self.name!r} a "
                    "filter, which stays in its own process, and the test logged to it (in "
                    "one program the filter judges the test's records too)"
                )
            handle(self, record)

        logging.Logger.handle = handled  # type: ignore[method-assign]
    if name not in FILTERED and _len(FILTERED) < 8:
        FILTERED.append(name)
