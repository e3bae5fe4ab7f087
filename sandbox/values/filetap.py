"""In the candidate's process: the changes to the test's files that the
shared directory's rule refuses and one program would have made.

The test's files and directories in the shared directory are read-only to
the candidate's process (docs/sandbox.md). A refusal the candidate's code
swallows (best-effort cleanup in ``try: ... except OSError: pass``) leaves
the test's file as it was where one program changed or removed it, and a
test that checks the file is unchanged would pass a wrong answer. So `tap`
notes each such change before the kernel refuses it (an audit hook, and
``os.access`` asked whether the test's file is writable), and the mirror
hands it to the verifier, where it fails the check with `reason` whatever
either side does after. A change one program could not make either (a
file or directory the test left without its owner's write bit, a
directory that is not empty) is not noted: an answer that tries it and
falls back takes the same path in both.

The candidate's code could hide a note from this hook; that only makes it
an answer that never tried the change, which one program judges alike.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

MAX_NOTED = 16
"""Changes kept for the verifier (the first one names the failure)."""
NOTED: list[str] = []
"""The test's paths (in the shared directory) the rule refused a change
of, first first."""
_OWNER_W = stat.S_IWUSR
_OWNER_WX = stat.S_IWUSR | stat.S_IXUSR
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_EVENTS = frozenset(
    "open os.remove os.rmdir os.rename os.mkdir os.link os.symlink".split()
    + "os.chmod os.chown os.utime os.truncate".split()
)
_stat = os.stat
_lstat = os.lstat
_access = os.access
_listdir = os.listdir
_readlink = os.readlink
_getcwd = os.getcwd
_getuid = os.getuid
_fsdecode = os.fsdecode
_normpath = os.path.normpath
_realpath = os.path.realpath
_join = os.path.join
_split = os.path.split
_type = type
_isinstance = isinstance


def reason(path: str) -> str:
    """Why a check fails on the rule: the candidate changed the test's file."""
    return (
        f"strict scoring: the candidate's code may not change {path[-200:]}: "
        "the test's files and directories in the shared directory are "
        "read-only to the candidate's process (in one program they are "
        "the program's own)"
    )


class _Tap:
    """What the audit hook notes: each event that changes a path under ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/") + "/"

    def event(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            if _type(args[2]) is int and args[2] & _WRITES:
                self.write(self.full(args[0], None), args[2])
        elif event in ("os.remove", "os.rmdir"):
            self.remove(self.full(args[0], args[1]), event == "os.rmdir")
        elif event == "os.rename":
            self.remove(self.full(args[0], args[2]), False)
            self.replace(self.full(args[1], args[3]))
        elif event == "os.link":
            self.create(self.full(args[1], args[3]))
        elif event in ("os.mkdir", "os.symlink"):
            self.create(self.full(args[0] if event == "os.mkdir" else args[1], args[-1]))
        elif event == "os.truncate":
            self.write(self.full(args[0], None), os.O_WRONLY)
        else:  # chmod, chown, utime: only the owner may
            at = self.full(args[0], args[-1])
            if at is not None and self.theirs(_stat(at)):
                self.note(at)

    def full(self, path: Any, dir_fd: Any) -> str | None:
        """``path`` as an absolute path with its directory resolved, if it
        is in the shared directory (None for a file descriptor)."""
        if not _isinstance(path, str | bytes | os.PathLike):
            return None
        text = _fsdecode(path)
        if text.startswith("/"):
            base = ""
        elif _type(dir_fd) is int and dir_fd >= 0:
            base = _readlink(f"/proc/self/fd/{dir_fd}")
        else:
            base = _getcwd()
        head, name = _split(_normpath(_join(base, text)))
        full = _join(_realpath(head), name)
        return full if full.startswith(self.root) else None

    def theirs(self, st: os.stat_result) -> bool:
        """Made by the other side (the child takes its uid after `tap`)."""
        return st.st_uid != _getuid()

    def write(self, at: str | None, flags: int) -> None:
        """Opening for writing (``flags``), or truncating."""
        if at is None:
            return
        try:
            st = _stat(at)
        except FileNotFoundError:
            if flags & os.O_CREAT:
                self.create(at)
            return
        if flags & os.O_CREAT and flags & os.O_EXCL:
            return  # it exists: both fail alike
        if self.theirs(st) and st.st_mode & _OWNER_W and not _access(at, os.W_OK):
            self.note(at)

    def create(self, at: str | None) -> None:
        """A new name in a directory of the test's one program could write."""
        if at is None:
            return
        try:
            _lstat(at)
            return  # it exists: both fail alike (or it is opened, not made)
        except FileNotFoundError:
            pass
        head = _split(at)[0]
        st = _stat(head)
        if (
            self.theirs(st)
            and st.st_mode & _OWNER_WX == _OWNER_WX
            and not _access(head, os.W_OK | os.X_OK)
        ):
            self.note(at)

    def remove(self, at: str | None, directory: bool) -> None:
        """Removing (or renaming away) a name: refused where the directory
        is not writable to us, or sticky and neither it nor the name ours."""
        if at is None:
            return
        head = _split(at)[0]
        st, dst = _lstat(at), _stat(head)
        if dst.st_mode & _OWNER_WX != _OWNER_WX or (directory and _listdir(at)):
            return  # one program is refused too
        sticky = dst.st_mode & stat.S_ISVTX and self.theirs(st) and self.theirs(dst)
        if sticky or not _access(head, os.W_OK | os.X_OK):
            self.note(at)

    def replace(self, at: str | None) -> None:
        if at is None:
            return
        try:
            _lstat(at)
        except FileNotFoundError:
            self.create(at)
            return
        self.remove(at, False)

    def note(self, at: str) -> None:
        """Keep ``at`` by its name in the shared directory."""
        name = at[len(self.root) :]
        if len(NOTED) < MAX_NOTED and name not in NOTED:
            NOTED.append(name)


def tap(root: str) -> None:
    """In the child whose work directory ``root`` is shared with the check:
    note the changes of the test's files there that the rule refuses."""
    hook = _Tap(root)
    changed, events = hook.event, _EVENTS

    def audit(event: str, args: tuple[Any, ...]) -> None:
        # Called for every audited event in the process, ``id()`` among
        # them (the value codecs call it for each object): a plain function
        # that returns at once costs least.
        if event in events:  # what it calls below raises none of these events
            try:
                changed(event, args)
            except BaseException:  # a hook that raises would refuse the call
                pass

    sys.addaudithook(audit)
    real = os.access

    def access(path: Any, mode: int, **kw: Any) -> bool:
        got = real(path, mode, **kw)
        if not got and mode & os.W_OK and not kw:
            try:
                _probed(hook, path, mode)
            except BaseException:  # the answer stands as the kernel gave it
                pass
        return got

    access.__doc__ = real.__doc__
    os.access = access


def _probed(hook: _Tap, path: Any, mode: int) -> None:
    """``os.access(path, W_OK)`` answered False for a file or directory of
    the test's that one program could change: noted as the change itself,
    since an answer that asks takes the other path here."""
    at = hook.full(path, None)
    if at is None:
        return
    st = _stat(at)
    need = _OWNER_WX if stat.S_ISDIR(st.st_mode) else _OWNER_W
    if hook.theirs(st) and st.st_mode & need == need and _access(at, mode & ~os.W_OK):
        hook.note(at)
