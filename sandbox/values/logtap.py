"""Log records the candidate's code emits, handed to the test's loggers.

In the child, `tap` puts a handler on the root logger that keeps each
record that reaches it (as plain fields, its message already formatted)
for the next message to the verifier (`protocol.Logged`). The logger
levels the test set (``assertLogs`` sets one) reach the child with the
test's process state (`world`), so a record is emitted there when it would
be in one program. In the verifier, `emit` hands each record to the
test's logger of that name, if it is enabled for the record's level: the
test's handlers (``assertLogs``, a ``caplog``-style handler) see it.
The attributes a call's ``extra=`` gave the record cross with it where
their values are numbers, strings, booleans or None, and its exception,
where it is of a builtin type, as ``exc_info`` (no traceback; its text is
``exc_text``).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from . import logfilters, realclasses, warntap

MAX_RECORDS = 1000
"""Records kept between two messages (the rest are dropped)."""
MAX_TEXT = 10_000
MAX_EXTRA = 20
"""Attributes of a record's ``extra=`` that cross with it."""
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}
_SCALARS = (int, float, bool, str, type(None))
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
            self.records.append(
                [*map(_plain, fields), _plain(trace), _extra(record), _raised(record.exc_info)]
            )
        except Exception:
            pass

    def take(self) -> list[list[Any]]:
        records, self.records = self.records, []
        return records


def _extra(record: logging.LogRecord) -> list[list[Any]]:
    """``[[name, value], ...]``: what ``extra=`` added to ``record``."""
    out: list[list[Any]] = []
    for key, value in record.__dict__.items():
        if key not in _STANDARD and _type(value) in _SCALARS and _len(out) < MAX_EXTRA:
            out.append([str(key)[:100], value[:MAX_TEXT] if _type(value) is str else value])
    return out


def _raised(exc_info: Any) -> list[str] | None:
    """``[type name, message]`` of a record's exception where its type is
    a builtin one (by identity: `realclasses`), for the test's
    ``record.exc_info``."""
    if _type(exc_info) is not tuple or _len(exc_info) < 2:
        return None
    name = realclasses.builtin_name(exc_info[0])
    return None if name is None else [name, str(exc_info[1])[:MAX_TEXT]]


def _exc_info(raised: Any) -> tuple[Any, ...] | None:
    """In the verifier: the record's ``exc_info`` for ``[type name,
    message]``: the builtin exception, with no traceback."""
    if type(raised) is not list or len(raised) != 2 or type(raised[1]) is not str:
        return None
    cls = realclasses.builtin(raised[0])
    if cls is None or not issubclass(cls, BaseException):
        return None
    try:
        return cls, cls(raised[1]), None
    except Exception:
        return None


def _extras(items: Any) -> dict[str, Any]:
    """In the verifier: the child's ``extra=`` attributes that a record of
    its own may take (names no record or its class already has)."""
    out: dict[str, Any] = {}
    for item in items[:MAX_EXTRA] if type(items) is list else ():
        if type(item) is list and len(item) == 2 and type(item[0]) is str:
            key, value = item
            if (
                key.isidentifier()
                and not key.startswith("_")
                and key not in _STANDARD
                and not hasattr(logging.LogRecord, key)
                and type(value) in _SCALARS
            ):
                out[key] = value
    return out


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
_tracked: list[list[Any]] = []
"""In the child: ``[name, logger, its handlers as last looked at]`` for
each logger `look` reads, found again when there are more."""
_count = [-1]


def _handlers(lg: logging.Logger) -> tuple[int, ...] | None:
    """A logger's handlers, by identity (None: not a list)."""
    found = lg.handlers
    if _type(found) is not list:
        return None
    return tuple(map(id, found)) if found else ()


def _track(seen: dict[str, Any]) -> None:
    known = logging.Logger.manager.loggerDict
    _count[0] = _len(known)
    found = [(str(n), lg) for n, lg in list(known.items()) if isinstance(lg, logging.Logger)]
    _tracked[:] = [[n, lg, seen.get(n, ())] for n, lg in [("root", logging.root), *found]]


def _watch_handlers() -> None:
    """Take each logger's handlers as they are before the program loads."""
    _track({})
    for item in _tracked:
        item[2] = _handlers(item[1])


def look() -> None:
    """In the child, before each message: note each logger whose handlers
    the candidate's code changed since the last look, however it did
    (``addHandler``, which ``basicConfig`` and ``dictConfig`` use,
    ``handlers[:] = [...]``, ``handlers.append``), into `HANDLED`. About a
    microsecond for the dozen loggers a child has."""
    try:
        if _len(logging.Logger.manager.loggerDict) != _count[0]:
            _track({item[0]: item[2] for item in _tracked})
        for item in _tracked:
            found = item[1].handlers
            now = _handlers(item[1]) if found or _type(found) is not list else ()
            if now != item[2]:
                item[2] = now
                if _len(HANDLED) < 8 and item[0] not in HANDLED:
                    HANDLED.append(item[0][:200])
    except Exception:  # the candidate's code replaced logging's own machinery
        pass


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
        if type(item) is not list or len(item) != 8:
            continue
        name, level, text, func, line, trace, extra, raised = item
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
                **_extras(extra),
                "name": name[:200],
                "levelno": level,
                "levelname": logging.getLevelName(level),
                "msg": text,
                "funcName": func if type(func) is str else "",
                "lineno": line if type(line) is int else 0,
                "exc_text": trace if type(trace) is str else None,
                "exc_info": _exc_info(raised),
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
