"""Log records the candidate's code emits, handed to the test's loggers.

In the child, `tap` puts a handler on the root logger that keeps each
record that reaches it (as plain fields, its message already formatted)
for the next message to the verifier (`protocol.Logged`). The logger
levels the test set (``assertLogs`` sets one) reach the child with the
test's process state (`world`), so a record is emitted there when it would
be in one program. In the verifier, `emit` hands each record to the
test's logger of that name, if it is enabled for the record's level: the
test's handlers (``assertLogs``, a ``caplog``-style handler) see it.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from . import logfilters, warntap

MAX_RECORDS = 1000
"""Records kept between two messages (the rest are dropped)."""
MAX_TEXT = 10_000
_len = len
_type = type


class _Tap(logging.Handler):
    def __init__(self, budget: list[int]) -> None:
        super().__init__()
        self.budget = budget
        self.records: list[list[Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if _len(self.records) >= MAX_RECORDS or self.budget[0] <= 0:
            return
        try:
            text = str(record.getMessage())[:MAX_TEXT]
            trace = (
                logging.Formatter().formatException(record.exc_info) if record.exc_info else None
            )
            self.budget[0] -= _len(text)
            fields = [record.name, record.levelno, text, record.funcName, record.lineno]
            self.records.append([*map(_plain, fields), _plain(trace)])
        except Exception:
            pass

    def take(self) -> list[list[Any]]:
        records, self.records = self.records, []
        return records


def _plain(v: Any) -> Any:
    if _type(v) is int or v is None:
        return v
    return str(v)[:MAX_TEXT]


def tap(budget: list[int]) -> _Tap:
    """In the child: keep every record a logger handles, within ``budget``
    (shared with what the candidate prints). Taken where a logger passes a
    record to its handlers, not as a handler of the root's: the candidate's
    code may remove the root's handlers (``basicConfig(force=True)``) or
    stop its logger's propagation, which in one program leaves the test's
    own handlers in place. The test's side decides what reaches them; no
    last-resort handler prints here what the test's would print there."""
    handler = _Tap(budget)
    call_handlers = logging.Logger.callHandlers

    def taken(self: logging.Logger, record: logging.LogRecord) -> None:
        handler.emit(record)
        call_handlers(self, record)

    logging.Logger.callHandlers = taken  # type: ignore[method-assign]
    logging.lastResort = None  # type: ignore[assignment]
    _watch_handlers()
    return handler


HANDLED: list[str] = []
"""In the child: loggers the candidate's code gave a handler (by name, in
order, at most 8), which the test's loggers of those names lack."""


def _watch_handlers() -> None:
    """Note each logger the candidate's code adds a handler to
    (``addHandler``, which ``basicConfig`` and ``dictConfig`` use too)."""
    add = logging.Logger.addHandler

    def add_handler(self: logging.Logger, hdlr: logging.Handler) -> None:
        if _len(HANDLED) < 8 and self.name not in HANDLED:
            HANDLED.append(str(self.name)[:200])
        add(self, hdlr)

    logging.Logger.addHandler = add_handler  # type: ignore[method-assign]


def levels() -> tuple[tuple[str, int], ...] | None:
    """In the verifier: the levels set on the test's loggers, if it uses logging."""
    if "logging" not in sys.modules:
        return None
    loggers = logging.Logger.manager.loggerDict.items()
    found = [(n, lg.level) for n, lg in loggers if type(lg) is logging.Logger and lg.level]
    return (("root", logging.getLogger().level), *sorted(found)[:MAX_RECORDS])


def set_levels(items: Any) -> None:
    """In the child: the test's logger levels."""
    if type(items) is not list:
        return
    for item in items[:MAX_RECORDS]:
        if type(item) is list and len(item) == 2 and type(item[0]) is str:
            if type(item[1]) is int and 0 <= item[1] <= 100:
                logging.getLogger(item[0][:200]).setLevel(item[1])


def emit(records: Any, budget: int) -> tuple[int, bool]:
    """In the verifier: the child's records, to the test's loggers, within
    ``budget`` characters; returns the characters used and whether every
    record came (not when the child's tap may have dropped some at its
    `MAX_RECORDS`). A record of a
    logger the test never made goes to its nearest ancestor the test has
    (as one program's new logger would propagate there), so the child
    cannot make the verifier build loggers."""
    used = 0
    if type(records) is not list:
        return used, True
    for item in records[:MAX_RECORDS]:
        if type(item) is not list or len(item) != 6:
            continue
        name, level, text, func, line, trace = item
        if type(name) is not str or type(level) is not int or type(text) is not str:
            continue
        if used + len(text) > budget:
            return used, False
        used += len(text)
        if name == warntap.MARK:
            warntap.issue(text, func, line)
            continue
        logger = _nearest(name[:200])
        if not logger.isEnabledFor(level):
            continue
        record = logging.makeLogRecord(
            {
                "name": name[:200],
                "levelno": level,
                "levelname": logging.getLevelName(level),
                "msg": text,
                "funcName": func if type(func) is str else "",
                "lineno": line if type(line) is int else 0,
                "exc_text": trace if type(trace) is str else None,
            }
        )
        logfilters.EMITTING[0] = True  # the candidate's record, which its filter saw
        try:
            logger.handle(record)
        finally:
            logfilters.EMITTING[0] = False
    return used, len(records) < MAX_RECORDS


def _nearest(name: str) -> logging.Logger:
    """The test's logger of that name, or of its nearest dotted ancestor,
    or the root logger."""
    known = logging.Logger.manager.loggerDict
    while name and name != "root":
        found = known.get(name)
        if type(found) is logging.Logger:
            return found
        name = name.rpartition(".")[0]
    return logging.getLogger()
