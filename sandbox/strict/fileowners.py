"""Named reasons for the shared directory's one rule: each side's files are
its own to change (docs/sandbox.md). The candidate's process may read the
test's files there but not write, rename or remove them (the test could
then read back what the candidate put in its fixture or its expected
answer). In one program the files are the program's own, so a check that
fails on the rule says so instead of a bare ``PermissionError``. The
other way (the test writing into a name or a directory the candidate's
process made) is named where it is refused (`isolation.sharedwd.guard`).
"""

from __future__ import annotations

import errno
import os

from ..values import filetap
from .outcomes import Refused

_DENIED = (errno.EACCES, errno.EPERM)


def note_candidate_denied(exc: BaseException, paths: object = None) -> None:
    """Keep the reason, should the check fail (`outcomes.Refused.first`),
    when ``exc`` (the candidate's, rebuilt) is a ``PermissionError`` on a
    file or directory the test's process owns (its own file names, else
    ``paths``: those of the error it was raised handling): the rule, not
    the answer, refused it."""
    if not isinstance(exc, PermissionError) or exc.errno not in _DENIED:
        return
    me = os.getuid()
    names = [exc.filename, exc.filename2]
    if exc.filename is None and type(paths) is list:
        names += paths[:2]
    for name in names:
        if type(name) is not str:
            continue
        for path in (name, os.path.dirname(name) or "."):
            try:
                owner = os.lstat(path).st_uid
            except OSError:
                continue
            if owner == me:
                Refused.note(filetap.reason(name))
                return
