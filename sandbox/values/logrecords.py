"""A `logging.LogRecord` as a value: its public attributes, rebuilt by
``logging.makeLogRecord`` on the other side.

A test that builds a record (``logging.makeLogRecord``) and hands it to
the candidate's ``Formatter.format`` or ``Filter.filter`` gets it read
there as in one program (``getMessage()``, ``levelname``, ``created``);
a proxy of the test's record would read no attribute. Its exception
crosses as its text (``exc_text``, what a formatter prints), not as
``exc_info``, whose traceback does not cross. What the other side sets
on the record (a formatter's ``message`` and ``asctime``) stays there.
Imports only the standard library.
"""

from __future__ import annotations

import logging
from typing import Any

MOST = 64
"""Attributes of one record."""
_LogRecord = logging.LogRecord
_make = logging.makeLogRecord
_exception_text = logging.Formatter().formatException
_type = type
_len = len
_hasattr = hasattr
_vars = vars
_list = list


def tree(v: Any, codec: Any, depth: int) -> object:
    """``["x", "logrecord", attributes]``."""
    fields: dict[str, Any] = {}
    for key, value in _list(_vars(v).items())[:MOST]:
        if _type(key) is str and not key.startswith("_"):
            fields[key] = value
    if fields.get("exc_info"):
        if not fields.get("exc_text"):
            try:
                fields["exc_text"] = _exception_text(fields["exc_info"])
            except Exception:
                fields["exc_text"] = None
        fields["exc_info"] = None
    return ["x", "logrecord", codec.encode(fields, depth + 1)]


def value(t: list[Any], codec: Any, depth: int, not_data: type[Exception]) -> Any:
    """The record of a tree (`tree`); its attributes are data attributes,
    never a name the record's class defines (``getMessage``)."""
    fields = codec.decode(t[2], depth + 1) if _len(t) == 3 else None
    if _type(fields) is not dict or _len(fields) > MOST:
        raise not_data("malformed log record")
    for key in fields:
        if _type(key) is not str or key.startswith("_") or _hasattr(_LogRecord, key):
            raise not_data("malformed log record")
    if fields.get("exc_info") is not None:  # never sent (`tree`): its text is exc_text
        raise not_data("malformed log record")
    return _make(fields)
