"""One cgroup per sandbox slot for memory, pids and cpu, on cgroup v1 or v2.

Which hierarchy carries which controller is detected at start
(`cgroupfs`: what is mounted, and where we sit in each); a controller bound to a mounted v1 hierarchy is
used there, otherwise the unified (v2) hierarchy is tried. Every slot
cgroup is nested under the engine's own, so whatever limits the engine
runs under still apply.

cgroup v2 only lets a cgroup without processes hand controllers to its
children. When the engine's cgroup holds processes (a systemd scope, a
container), and all of them are aioeval's (the engine and the processes it
started), they are moved into a leaf ``aioeval-engine`` beside the slot
cgroups, the way container runtimes nest; a cgroup shared with other
programs is left alone and the layer is reported missing, naming it.

`prepare` runs before the template enters its PID namespace (cgroup files
show pids as the reader's namespace sees them); `join` moves the template
in afterwards, so every candidate it forks starts inside at no cost.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass, field

from .. import frames
from .cgroupfs import CONTROLLERS, Mount, locate, parse_mountinfo, parse_proc_cgroup

LAYERS = {"memory": "cgroup-memory", "pids": "cgroup-pids", "cpu": "cgroup-cpu"}
PREFIX = "aioeval-"
ENGINE_LEAF = "aioeval-engine"
CPU_PERIOD_US = 100_000
OPTIONAL = frozenset({"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.max"})


@dataclass
class SlotCgroups:
    """The cgroups of one slot: created by `prepare`, joined by `join`."""

    dirs: list[str] = field(default_factory=list)
    homes: list[str] = field(default_factory=list)
    """Where the template was in each hierarchy, to go back before rmdir."""
    problems: dict[str, str] = field(default_factory=dict)
    """Controllers (of CONTROLLERS) that are not in force, with the reason."""
    procs: str | None = None
    """A cgroup.procs listing every process of the slot (for the kill)."""
    oom_events: str | None = None
    """File with the memory cgroup's ``oom_kill N`` counter."""
    where: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Controllers in force: cgroup version and directory."""
    cpu_usage: str | None = None
    """A counter of the CPU used by every process of the slot, the template
    included: v1 ``cpuacct.usage`` (ns) or v2 ``cpu.stat`` (usage_usec)."""


def _settings(ctrl: str, version: int, memory_bytes: int, nproc: int) -> dict[str, str]:
    """Limit files in write order. cpu: equal weight for every slot, and at
    most one CPU, so a slot's processes share one bounded allotment."""
    if ctrl == "memory":
        if version == 1:
            return {
                "memory.limit_in_bytes": str(memory_bytes),
                "memory.memsw.limit_in_bytes": str(memory_bytes),
            }
        return {"memory.max": str(memory_bytes), "memory.swap.max": "0"}
    if ctrl == "pids":
        return {"pids.max": str(nproc)}
    if version == 1:
        return {
            "cpu.shares": "1024",
            "cpu.cfs_period_us": str(CPU_PERIOD_US),
            "cpu.cfs_quota_us": str(CPU_PERIOD_US),
        }
    return {"cpu.weight": "100", "cpu.max": f"{CPU_PERIOD_US} {CPU_PERIOD_US}"}


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def prepare(*, name: str, engine_pid: int, memory_bytes: int, nproc: int) -> SlotCgroups:
    """Create this slot's cgroups and set their limits (nobody joins yet)."""
    slot = SlotCgroups()
    try:
        mounts = parse_mountinfo(_read("/proc/self/mountinfo"))
        own = parse_proc_cgroup(_read("/proc/self/cgroup"))
    except OSError as exc:
        slot.problems = dict.fromkeys(CONTROLLERS, f"cannot read cgroup mounts: {exc.strerror}")
        return slot
    v1, v2 = locate(mounts, own)
    by_dir: dict[str, list[str]] = {}
    for ctrl in CONTROLLERS:
        if ctrl in v1:
            by_dir.setdefault(v1[ctrl], []).append(ctrl)
    for base, ctrls in by_dir.items():
        _create(slot, base, base, name, ctrls, 1, memory_bytes, nproc)
    rest = [c for c in CONTROLLERS if c not in v1]
    if rest and v2 is None:
        for ctrl in rest:
            slot.problems[ctrl] = f"no cgroup v1 {ctrl} controller and no cgroup v2 mounted"
    elif rest and v2 is not None:
        _prepare_v2(slot, v2, rest, name, engine_pid, memory_bytes, nproc)
    _accounting(slot, mounts, own, name)
    return slot


def _accounting(slot: SlotCgroups, mounts: list[Mount], own: dict[str, str], name: str) -> None:
    """Find (or make) a counter of the slot's whole CPU use: rusage misses
    processes nobody waits for (a candidate may ignore SIGCHLD)."""
    for version, path in slot.where.values():
        if version == 2:
            slot.cpu_usage = os.path.join(path, "cpu.stat")
            return
    v1, _ = locate(mounts, own, ("cpuacct",))
    base = v1.get("cpuacct")
    if base is None:
        return
    path = os.path.join(base, name)
    if path not in slot.dirs:
        _sweep_stale(base)
        try:
            os.mkdir(path, 0o755)
        except OSError:
            return
        slot.dirs.append(path)
        slot.homes.append(base)
    slot.cpu_usage = os.path.join(path, "cpuacct.usage")


def cpu_usage_ms(slot: SlotCgroups) -> float | None:
    """CPU used so far by the slot's processes, or None without a counter."""
    if slot.cpu_usage is None:
        return None
    try:
        text = frames.read_kept(slot.cpu_usage).decode()
    except OSError:
        return None
    if slot.cpu_usage.endswith("cpuacct.usage"):
        return int(text) / 1e6
    for line in text.splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e3
    return None


def _create(
    slot: SlotCgroups,
    base: str,
    home: str,
    name: str,
    ctrls: list[str],
    version: int,
    memory_bytes: int,
    nproc: int,
) -> None:
    path = os.path.join(base, name)
    try:
        _sweep_stale(base)
        os.mkdir(path, 0o755)
    except OSError as exc:
        for ctrl in ctrls:
            slot.problems[ctrl] = f"cannot create a cgroup v{version} in {base}: {exc.strerror}"
        return
    slot.dirs.append(path)
    slot.homes.append(home)
    for ctrl in ctrls:
        try:
            for key, value in _settings(ctrl, version, memory_bytes, nproc).items():
                if not os.path.exists(os.path.join(path, key)):
                    continue
                try:
                    _write(os.path.join(path, key), value)
                except OSError:
                    # A v1 quota above the engine's own quota is refused;
                    # the engine's then bounds the slot, and the weight
                    # still shares the CPU fairly.
                    if key not in OPTIONAL:
                        raise
        except OSError as exc:
            slot.problems[ctrl] = f"cannot set cgroup v{version} {ctrl} limits: {exc.strerror}"
            continue
        slot.where[ctrl] = (version, path)
        if ctrl == "memory":
            events = "memory.oom_control" if version == 1 else "memory.events"
            slot.oom_events = os.path.join(path, events)
        # Any hierarchy lists all of the slot's processes; prefer pids's.
        if ctrl == "pids" or slot.procs is None:
            slot.procs = os.path.join(path, "cgroup.procs")


def _prepare_v2(
    slot: SlotCgroups,
    own_dir: str,
    ctrls: list[str],
    name: str,
    engine_pid: int,
    memory_bytes: int,
    nproc: int,
) -> None:
    base = os.path.dirname(own_dir) if os.path.basename(own_dir) == ENGINE_LEAF else own_dir
    try:
        available = _read(os.path.join(base, "cgroup.controllers")).split()
        enabled = _read(os.path.join(base, "cgroup.subtree_control")).split()
    except OSError as exc:
        for ctrl in ctrls:
            slot.problems[ctrl] = f"cannot read cgroup v2 {base}: {exc.strerror}"
        return
    usable = [c for c in ctrls if c in available]
    for ctrl in ctrls:
        if ctrl not in available:
            have = ", ".join(available) or "none"
            slot.problems[ctrl] = (
                f"cgroup v2: the {ctrl} controller is not available in {base} (available: {have})"
            )
    if not usable:
        return
    home = own_dir
    if any(c not in enabled for c in usable):
        problem, home = _enable_v2(base, own_dir, usable, engine_pid)
        if problem is not None:
            for ctrl in usable:
                slot.problems[ctrl] = problem
            return
    _create(slot, base, home, name, usable, 2, memory_bytes, nproc)


def _enable_v2(
    base: str, own_dir: str, ctrls: list[str], engine_pid: int
) -> tuple[str | None, str]:
    """Enable `ctrls` for the children of `base`, moving aioeval's processes
    into the engine leaf if `base` must be emptied first."""
    request = " ".join(f"+{c}" for c in ctrls)
    control = os.path.join(base, "cgroup.subtree_control")
    home = own_dir
    for _ in range(20):
        try:
            _write(control, request)
            return None, home
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return f"cgroup v2: cannot enable {request} in {base}: {exc.strerror}", home
        pids = [int(p) for p in _read(os.path.join(base, "cgroup.procs")).split()]
        foreign = [p for p in pids if not _is_ours(p, engine_pid)]
        if foreign:
            return (
                f"cgroup v2: {base} also holds processes that are not aioeval's "
                f"(pid {foreign[0]}); run aioeval in a cgroup of its own, e.g. "
                "systemd-run --scope -p Delegate=yes aioeval ...",
                home,
            )
        leaf = os.path.join(base, ENGINE_LEAF)
        with contextlib.suppress(FileExistsError):
            os.mkdir(leaf, 0o755)
        home = leaf
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                _write(os.path.join(leaf, "cgroup.procs"), str(pid))
    return f"cgroup v2: {base} keeps gaining processes; cannot enable {request}", home


def _is_ours(pid: int, engine_pid: int) -> bool:
    """The engine, or a process below it (a template, its wrapper)."""
    for depth in range(4):
        if pid in (engine_pid, os.getpid()):
            return True
        if pid <= 1:
            return False
        try:
            stat = _read(f"/proc/{pid}/stat")
        except OSError:
            return depth == 0  # exited meanwhile: nothing to move
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return False


def join(slot: SlotCgroups) -> None:
    """Move the calling process into every slot cgroup ("0" is the writer,
    whatever PID namespace it is in)."""
    for path in slot.dirs:
        try:
            _write(os.path.join(path, "cgroup.procs"), "0")
        except OSError as exc:
            for ctrl, (_, where) in list(slot.where.items()):
                if where == path:
                    del slot.where[ctrl]
                    slot.problems[ctrl] = f"cannot join the {ctrl} cgroup: {exc.strerror}"
            if slot.procs is not None and slot.procs.startswith(path + "/"):
                slot.procs = None
            if slot.oom_events is not None and slot.oom_events.startswith(path + "/"):
                slot.oom_events = None
            if slot.cpu_usage is not None and slot.cpu_usage.startswith(path + "/"):
                slot.cpu_usage = None


def teardown(slot: SlotCgroups) -> None:
    """Leave and remove the slot's cgroups (best effort: the engine retries
    rmdir after the template is gone)."""
    for path, home in zip(reversed(slot.dirs), reversed(slot.homes), strict=True):
        with contextlib.suppress(OSError):
            _write(os.path.join(home, "cgroup.procs"), "0")
            os.rmdir(path)


def _sweep_stale(parent: str) -> None:
    """Remove cgroups left by templates that died without tearing down.

    A template killed with its engine (SIGKILL, parent-death signal) cannot
    remove its own cgroups; the next template in the same place does. Only
    empty ones named after a dead pid go: rmdir refuses anything non-empty.
    """
    try:
        names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name.removeprefix(PREFIX)
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(parent, name))
