"""Where this process's cgroup hierarchies are: which are mounted (v1 with
their controllers, v2), where, and where we sit in each, read from the
texts of /proc/self/mountinfo and /proc/self/cgroup (pure: tested by
table)."""

from __future__ import annotations

import os
from dataclasses import dataclass

CONTROLLERS = ("memory", "pids", "cpu")
"""The controllers a slot is bounded by."""


@dataclass(frozen=True)
class Mount:
    """A mounted cgroup hierarchy."""

    version: int
    path: str
    """Mount point."""
    root: str
    """The hierarchy's directory mounted there ("/" unless bind-mounted)."""
    controllers: frozenset[str] = frozenset()
    """v1 only: the controllers bound to this hierarchy."""


def parse_mountinfo(text: str) -> list[Mount]:
    """The cgroup hierarchies in a /proc/<pid>/mountinfo text; the last mount
    on a path wins, as it hides the ones below it."""
    found: dict[str, Mount] = {}
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point = _unescape(fields[3]), _unescape(fields[4])
        fstype, options = tail[0], tail[2].split(",")
        if fstype == "cgroup2":
            found[point] = Mount(version=2, path=point, root=root)
        elif fstype == "cgroup":
            ctrls = frozenset(o for o in options if o in CONTROLLERS or o == "cpuacct")
            found[point] = Mount(version=1, path=point, root=root, controllers=ctrls)
        else:
            found.pop(point, None)
    # A mount hidden under a later mount on a parent path is unreachable.
    points = list(found)
    return [
        m
        for i, m in enumerate(found.values())
        if not any(m.path.startswith(p + "/") for p in points[i + 1 :])
    ]


def _unescape(path: str) -> str:
    return path.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n")


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """Our path per hierarchy from /proc/self/cgroup: v1 controller names
    map to their path, ``""`` to the v2 path."""
    own: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, names, path = parts
        if names == "":
            own[""] = path
        for name in names.split(","):
            if name:
                own[name] = path
    return own


def _under(mount: Mount, path: str) -> str | None:
    """The directory of hierarchy path `path` below `mount`, if it is visible."""
    root = mount.root.rstrip("/")
    if path != root and not path.startswith(root + "/"):
        return None
    return os.path.normpath(mount.path + "/" + path[len(root) :])


def locate(
    mounts: list[Mount], own: dict[str, str], controllers: tuple[str, ...] = CONTROLLERS
) -> tuple[dict[str, str], str | None]:
    """Our v1 directory per controller bound to a mounted v1 hierarchy, and
    our v2 directory (None without a cgroup2 mount we can see ourselves in)."""
    v1: dict[str, str] = {}
    v2: str | None = None
    for m in mounts:
        if m.version == 1:
            for ctrl in m.controllers & set(controllers):
                where = _under(m, own.get(ctrl, "\0"))
                if where is not None:
                    v1[ctrl] = where
        elif "" in own and v2 is None:
            v2 = _under(m, own[""])
    return v1, v2
