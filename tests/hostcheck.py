"""What a sandbox run left on the host, seen from outside the sandbox.

Shared by the isolation tests: processes of the candidates' uids, processes
below the templates, and SysV IPC objects (the host's ``ipcs``).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from collections.abc import Iterable

import pytest

from aioeval.executors.local import LocalPool
from aioeval.sandbox.isolation import cgroupfs, landlock_rules
from aioeval.sandbox.isolation.layers import UID_BASE

_NAMESPACE_OF = {
    "pid-namespace": 0x20000000,
    "network-namespace": 0x40000000,
    "ipc-namespace": 0x08000000,
    "disk-tmpfs": 0x00020000,  # each of these needs a mount namespace
    "minimal-dev": 0x00020000,
    "private-shm": 0x00020000,
    "no-atime": 0x00020000,
}


def _can_unshare(flag: int) -> bool:
    """Can a child of ours enter a new namespace of this kind?"""
    pid = os.fork()
    if pid == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        if os.geteuid() != 0 and libc.unshare(0x10000000) != 0:  # a user namespace first
            os._exit(1)
        os._exit(0 if libc.unshare(flag) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def _cgroup_controller(ctrl: str) -> bool:
    """Does a hierarchy we may write to carry this controller?"""
    if os.geteuid() != 0:
        return False
    with open("/proc/self/mountinfo") as fh:
        mounts = cgroupfs.parse_mountinfo(fh.read())
    with open("/proc/self/cgroup") as fh:
        own = cgroupfs.parse_proc_cgroup(fh.read())
    v1, v2 = cgroupfs.locate(mounts, own)
    if ctrl in v1:
        return True
    if v2 is None:
        return False
    try:
        with open(os.path.join(os.path.dirname(v2), "cgroup.controllers")) as fh:
            return ctrl in fh.read().split()
    except OSError:
        return False


def host_offers(layer: str) -> bool:
    """Whether this host can give the sandbox `layer`, probed apart from the
    sandbox's own setup (so a layer the pool failed to set up is told
    apart from one the host does not have)."""
    if layer in _NAMESPACE_OF:
        return _can_unshare(_NAMESPACE_OF[layer])
    if layer == "unprivileged-uid":
        return os.geteuid() == 0
    if layer == "landlock":
        return landlock_rules.abi() >= 1
    if layer.startswith("cgroup-"):
        return _cgroup_controller(layer.removeprefix("cgroup-"))
    return True  # rlimits, seccomp, subreaper, ...: every Linux host


def require_layers(pool: LocalPool, needed: Iterable[str]) -> None:
    """Fail when the pool lacks a layer the host offers (a sandbox that set
    itself up with less than it could is a bug, not an unlucky host); skip
    when the host itself lacks it."""
    missing = sorted(set(needed) - set(pool.layers))
    offered = [name for name in missing if host_offers(name)]
    if offered:
        pytest.fail(f"the host offers {offered} but the pool lacks them: {pool.warnings}")
    if missing:
        pytest.skip(f"isolation layers this host does not offer: {missing}")


def template_pids(pool: LocalPool) -> list[int]:
    return [s.ready.pid for s in pool._slots if s.ready is not None]


def candidate_uids(pool: LocalPool) -> set[int]:
    return {UID_BASE + pid for pid in template_pids(pool)}


def _status(pid: str) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return {}
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def processes_of(uids: set[int]) -> list[int]:
    """Live (non-zombie) processes whose real uid is one of `uids`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _status(name)
        uid = fields.get("Uid", "").split()[:1]
        if uid and int(uid[0]) in uids and not fields.get("State", "").startswith("Z"):
            found.append(int(name))
    return found


def descendants(pid: int) -> list[int]:
    """Live processes below `pid` (host view)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            tids = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{current}/task/{tid}/children") as fh:
                    kids = [int(x) for x in fh.read().split()]
            except OSError:
                continue
            found += [k for k in kids if not _status(str(k)).get("State", "Z").startswith("Z")]
            todo += kids
    return found


def ipc_objects(keys: set[int], uids: set[int]) -> list[str]:
    """Host SysV objects with one of `keys` or created or owned by `uids`.

    Read from /proc/sysvipc (what ``ipcs`` reads), with ``ipcs`` itself run
    as a cross-check of the owners it prints.
    """
    found = []
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as fh:
            header, *rows = fh.read().splitlines()
        names = header.split()
        for row in rows:
            cols = dict(zip(names, row.split(), strict=False))
            owners = {int(cols["uid"]), int(cols["cuid"])}
            if int(cols["key"]) in keys or owners & uids:
                found.append(f"{kind}: {row}")
    listing = subprocess.run(["ipcs", "-a", "-c"], capture_output=True, text=True, check=True)
    assert not any(f" {uid} " in listing.stdout for uid in uids), listing.stdout
    return found


def sockets_of(uids: set[int]) -> list[str]:
    """Host TCP/UDP sockets (the engine's network namespace) owned by `uids`."""
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        with open(f"/proc/net/{table}") as fh:
            header, *rows = fh.read().splitlines()
        # tx_queue:rx_queue and tr:tm->when are one column each in the rows.
        col = header.split().index("uid") - 2
        found += [f"{table}: {row}" for row in rows if int(row.split()[col]) in uids]
    return found


def assert_nothing_left(pool: LocalPool, keys: frozenset[int] = frozenset()) -> None:
    """No candidate process, nothing below a template, no SysV object, no
    socket of a candidate uid on the host."""
    uids = candidate_uids(pool)
    assert processes_of(uids) == []
    for pid in template_pids(pool):
        assert descendants(pid) == [], pid
    assert ipc_objects(set(keys), uids) == []
    assert sockets_of(uids) == []
