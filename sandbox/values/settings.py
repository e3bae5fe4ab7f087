"""Interpreter-wide settings that one program's test and answer share, as
plain fields both ways: the ``csv`` field size limit, whether the cyclic
garbage collector runs, the ``logging.disable`` level and the socket
default timeout.

`read` takes them in one process (a module neither side imported reads as
`UNSET`, and so changes nothing on the other side); `put` sets them in the
other, each checked first: the tree comes from the verifier (`world`) or
from the candidate's child (`mirror`), and a malformed or out-of-range
field leaves that setting as it was. Each is data, never code, so the
verifier may take the candidate's as freely as the child takes the test's.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

UNSET = "-"
"""A setting whose module the process has not imported."""
MAX_TIMEOUT = 1e9
_type = type


def read() -> list[Any]:
    """The settings as ``[csv limit, gc enabled, logging disable level,
    socket default timeout]``."""
    csv = sys.modules.get("_csv")
    logging = sys.modules.get("logging")
    sock = sys.modules.get("socket")
    return [
        UNSET if csv is None else csv.field_size_limit(),
        gc.isenabled(),
        UNSET if logging is None else logging.root.manager.disable,
        UNSET if sock is None else sock.getdefaulttimeout(),
    ]


def put(tree: Any) -> None:
    """Set what ``tree`` (from `read` on the other side) holds."""
    if _type(tree) is not list or len(tree) != 4:
        return
    limit, collecting, disabled, timeout = tree
    if _type(limit) is int and 0 <= limit <= sys.maxsize:
        import _csv

        if _csv.field_size_limit() != limit:
            _csv.field_size_limit(limit)
    if collecting is True and not gc.isenabled():
        gc.enable()
    elif collecting is False and gc.isenabled():
        gc.disable()
    if _type(disabled) is int and 0 <= disabled <= 1_000_000:
        logging = sys.modules.get("logging")
        if logging is None and disabled:
            import logging
        if logging is not None and logging.root.manager.disable != disabled:
            logging.disable(disabled)
    if timeout is None or (_type(timeout) is float and 0 <= timeout <= MAX_TIMEOUT):
        sock = sys.modules.get("socket")
        if sock is None and timeout is not None:
            import socket as sock
        if sock is not None and sock.getdefaulttimeout() != timeout:
            sock.setdefaulttimeout(timeout)
