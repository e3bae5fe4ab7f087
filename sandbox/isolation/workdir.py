"""A candidate's work directory: made empty before each job, gone after it.

Where the template has a mount namespace of its own, each job gets a fresh
size-capped tmpfs and loses it with one lazy unmount, so no tree a candidate
builds (a million files, a path ten thousand directories deep, directories
without permissions) can make cleanup fail or slow the next job. Elsewhere
`remove_tree` deletes iteratively with directory descriptors, so depth
costs neither recursion nor path length.

`hide` covers directories candidates must not read (a benchmark's answer key
shipped inside site-packages) with an empty read-only tmpfs.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MNT_DETACH = 2

_libc = ctypes.CDLL(None, use_errno=True)


def _mount_tmpfs(path: str, flags: int, opts: str) -> None:
    if int(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", flags, opts.encode())) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot mount a tmpfs on {path}: {os.strerror(err)}")


def mount_workdir(path: str, size_mb: int, uid: int | None) -> None:
    """Mount an empty tmpfs owned by the candidate's uid at ``path``."""
    owner = f",uid={uid},gid={uid}" if uid is not None else ""
    opts = f"size={max(1, size_mb)}m,nr_inodes=65536,mode=0700{owner}"
    _mount_tmpfs(path, MS_NOSUID | MS_NODEV | MS_NOEXEC, opts)


def unmount_workdir(path: str) -> None:
    """Drop the job's tmpfs and everything in it (lazily, so an fd a dead
    candidate left open cannot make it fail)."""
    if int(_libc.umount2(path.encode(), MNT_DETACH)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot unmount {path}: {os.strerror(err)}")


def fresh(path: str, spare: str, *, mounts: bool, disk_mb: int, uid: int | None) -> str:
    """An empty work dir for one job, owned by `uid` (None: ours): a fresh
    tmpfs at `path` where we have mounts, else `path` made anew, or `spare`
    when the last job left something at `path` that could not be removed."""
    if mounts:
        os.makedirs(path, mode=0o700, exist_ok=True)
        mount_workdir(path, disk_mb, uid)
        return path
    wdir = path
    try:
        os.mkdir(wdir, 0o700)
    except FileExistsError:
        wdir = spare
        os.mkdir(wdir, 0o700)
    if uid is not None:
        os.chown(wdir, uid, uid)
    return wdir


def discard(path: str, *, mounts: bool) -> None:
    """Drop a job's work dir and everything in it (see `fresh`)."""
    if mounts:
        unmount_workdir(path)
    else:
        remove_tree(path)


def hide(dirs: list[str]) -> list[str]:
    """Cover each existing directory with an empty read-only tmpfs (inside
    the template's own mount namespace). Returns the problems, one line each
    for the directories that could not be hidden."""
    problems = []
    for d in dirs:
        if not os.path.isdir(d):
            continue
        try:
            _mount_tmpfs(d, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
        except OSError as exc:
            problems.append(f"{d}: {exc.strerror}")
    return problems


def remove_tree(path: str) -> None:
    """Delete ``path`` and everything under it; never recurses.

    Subdirectories are emptied by moving their entries up into ``path``
    itself (renames within one directory tree), so at most two directories
    are open at a time whatever the depth. Permissions a candidate removed
    are restored first. Best effort: errors other than the tree's own shape
    are ignored, as ``shutil.rmtree(ignore_errors=True)`` would.
    """
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    counter = 0
    try:
        while True:
            with os.scandir(top) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            before = counter
            for name, is_dir in entries:
                if not is_dir:
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=top)
                        counter += 1
                    continue
                with contextlib.suppress(OSError):
                    os.chmod(name, stat.S_IRWXU, dir_fd=top, follow_symlinks=False)
                try:
                    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
                except OSError:
                    continue
                try:
                    with os.scandir(sub) as it:
                        inner = [e.name for e in it]
                    for child in inner:
                        counter += 1
                        with contextlib.suppress(OSError):
                            os.rename(child, f".rm{counter}", src_dir_fd=sub, dst_dir_fd=top)
                finally:
                    os.close(sub)
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=top)
                    counter += 1
            if counter == before:
                break  # empty, or nothing more can be removed
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(path)
