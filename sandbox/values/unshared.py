"""Process state a test can change that stays in the verifier's process:
the candidate's process never sees it (docs/strict-scoring.md lists it).

Read before the test runs and again when its check fails, so that a test
that relied on such a change fails with a reason that names it, not with
a bare ``AssertionError``. Reading is cheap (a shallow look at the
builtins and the working directory) and runs no code of the test's. A
working directory inside the shared one is handed to the candidate's
process (`world`), so it is not named.
"""

from __future__ import annotations

import builtins
import errno
import os
from typing import Any

from ..isolation import sharedwd


def _builtins() -> dict[str, Any]:
    return {f"builtins.{k}": id(v) for k, v in vars(builtins).items()}


_AT_FORK: dict[str, Any] = {}
"""The builtins as the verifier process holds them before it forks its
checks (`prepare`): every check starts with them, so a check does not
read them at its start (a look at each copies its page)."""


def prepare() -> None:
    """In the verifier process, once, before it forks any check."""
    _AT_FORK.update(_builtins())


def _read(start: bool = False) -> dict[str, Any]:
    out = dict(_AT_FORK) if start and _AT_FORK else _builtins()
    try:
        out["the working directory"] = os.getcwd()
    except OSError:
        out["the working directory"] = None
    return out


class Unshared:
    """The readings at the start of a check."""

    def __init__(self, handed: set[str] | None = None) -> None:
        self.start = _read(start=True)
        self.handed = handed or set()
        """Names whose changes the candidate's process is handed (`assigned`)."""

    def changed(self) -> list[str]:
        """What the test changed since the start, by name."""
        now = _read()
        return [
            k
            for k, v in now.items()
            if (k in self.start and self.start[k] != v and not self._handed(k, v))
            or (k not in self.start and k.startswith("builtins."))
        ]

    def _handed(self, key: str, value: Any) -> bool:
        """A name the candidate's process is handed, or a working directory
        inside the shared one, which it is handed too (`world`)."""
        start = self.start.get(key)
        return key in self.handed or (
            key == "the working directory"
            and type(start) is str
            and type(value) is str
            and value.startswith(start.rstrip("/") + "/")
        )


def candidate_file(exc: BaseException) -> str | None:
    """The reason for a test's ``PermissionError`` on a file the candidate
    made in the shared directory (removing or renaming it, which the kernel
    refuses another user in a sticky directory; reading one made for the
    candidate's user only, which the check's open hook noted while it
    existed: `sharedwd.UNREADABLE`), else None."""
    name = getattr(exc, "filename", None)
    if not isinstance(exc, PermissionError) or type(name) is not str:
        return None
    if os.path.abspath(name) in sharedwd.UNREADABLE:
        return (
            f"strict scoring: the test may not read {name[-200:]}, a file the candidate's "
            "process made for its own user only (in one program they are one user)"
        )
    if exc.errno != errno.EPERM:
        return None
    try:
        owner = os.lstat(name).st_uid
    except OSError:
        return None
    if owner == os.getuid():
        return None
    return _not_removed(name)


def removal() -> str | None:
    """The reason for a removal or rename of the test's that the kernel
    refused on the candidate's file or directory (`sharedwd.UNREMOVABLE`),
    noted as it was tried: named should the check fail, even when the
    test's runner caught the ``PermissionError`` (a ``tearDown``'s
    ``rmtree``)."""
    return _not_removed(sharedwd.UNREMOVABLE[0]) if sharedwd.UNREMOVABLE else None


def _not_removed(name: str) -> str:
    return (
        f"strict scoring: the test may not remove or rename {name[-200:]}, a file the "
        "candidate's process made or one in a directory it made (in one program it is "
        "the test's own)"
    )
