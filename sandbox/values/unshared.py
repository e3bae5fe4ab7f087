"""Process state a test can change that stays in the verifier's process:
the candidate's process never sees it (docs/strict-scoring.md lists it).

Read before the test runs and again when its check fails, so that a test
that relied on such a change fails with a reason that names it, not with
a bare ``AssertionError``. Reading is cheap (a shallow look at the
builtins, the working directory, the umask, the standard input, the time
zone and the socket timeout) and runs no code of the test's.
"""

from __future__ import annotations

import builtins
import os
import sys
import time
from typing import Any


def _read() -> dict[str, Any]:
    out: dict[str, Any] = {f"builtins.{k}": id(v) for k, v in vars(builtins).items()}
    try:
        out["the working directory"] = os.getcwd()
    except OSError:
        out["the working directory"] = None
    mask = os.umask(0o022)
    os.umask(mask)
    out["the umask"] = mask
    out["sys.stdin"] = id(sys.stdin)
    out["the time zone (time.tzset)"] = time.tzname
    sock = sys.modules.get("socket")
    if sock is not None:
        out["the socket default timeout"] = sock.getdefaulttimeout()
    return out


class Unshared:
    """The readings at the start of a check."""

    def __init__(self) -> None:
        self.start = _read()

    def changed(self) -> list[str]:
        """What the test changed since the start, by name."""
        now = _read()
        return [
            k
            for k, v in now.items()
            if (k in self.start and self.start[k] != v)
            or (k not in self.start and k.startswith("builtins."))
        ]
