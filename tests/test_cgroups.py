"""Slot cgroups: detection of v1/v2 hierarchies (pure, by table), CPU
fairness between slots through the real sandbox, and a cgroup-v2-only view
of this machine (a mount namespace where only the unified hierarchy is
mounted), asserting which limits hold and what summary.json reports.

Run inside the safety net (``tests/safety_net.sh python -m pytest ...``).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import anyio
import pytest
from hostcheck import assert_nothing_left

from aioeval.executors.local import LocalPool
from aioeval.sandbox.isolation import cgroupfs, cgroups, namespaces
from aioeval.sandbox.protocol import Limits, Outcome

pytestmark = pytest.mark.anyio

V1_HOST = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V1_OWN = "8:pids:/\n4:memory:/process_api/c72\n1:cpu:/\n0::/\n"
V2_HOST = """\
24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
"""
V2_OWN = "0::/user.slice/user-1000.slice/session-2.scope\n"


def test_detects_v1_controllers_and_the_unified_mount() -> None:
    mounts = cgroupfs.parse_mountinfo(V1_HOST)
    assert [m.path for m in mounts] == [
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup/cpuacct",
        "/sys/fs/cgroup/memory",
        "/sys/fs/cgroup/pids",
        "/sys/fs/cgroup/unified",
    ]
    v1, v2 = cgroupfs.locate(mounts, cgroupfs.parse_proc_cgroup(V1_OWN))
    assert v1 == {
        "cpu": "/sys/fs/cgroup/cpu",
        "memory": "/sys/fs/cgroup/memory/process_api/c72",
        "pids": "/sys/fs/cgroup/pids",
    }
    assert v2 == "/sys/fs/cgroup/unified"


def test_detects_a_v2_only_host() -> None:
    v1, v2 = cgroupfs.locate(cgroupfs.parse_mountinfo(V2_HOST), cgroupfs.parse_proc_cgroup(V2_OWN))
    assert v1 == {}
    assert v2 == "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"


def test_hidden_and_bind_mounted_hierarchies() -> None:
    # cgroup2 mounted over /sys/fs/cgroup hides the v1 mounts below it; a
    # bind mount of a sub-tree maps paths relative to its root.
    hidden = V1_HOST + "50 31 0:40 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    mounts = cgroupfs.parse_mountinfo(hidden)
    assert [(m.version, m.path) for m in mounts] == [(2, "/sys/fs/cgroup")]
    bind = "60 1 0:41 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    own = cgroupfs.parse_proc_cgroup("0::/docker/abc/sub\n")
    assert cgroupfs.locate(cgroupfs.parse_mountinfo(bind), own) == ({}, "/sys/fs/cgroup/sub")
    outside = cgroupfs.parse_proc_cgroup("0::/elsewhere\n")
    assert cgroupfs.locate(cgroupfs.parse_mountinfo(bind), outside) == ({}, None)
    # A mount point with a space is escaped in mountinfo.
    spaced = "61 1 0:42 / /mnt/my\\040cg rw - cgroup cgroup rw,pids\n"
    assert cgroupfs.parse_mountinfo(spaced)[0].path == "/mnt/my cg"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


SPINNERS = """
import os, time
r, w = os.pipe()
for _ in range(60):
    if os.fork() == 0:
        os.setsid()
        os.close(w)
        os.read(r, 1)  # all start together, once the last one exists
        while True:
            pass
os.close(w)
time.sleep(600)
"""
NEEDS_03_S = """
import time
t = time.process_time()
while time.process_time() - t < 0.3:
    pass
assert sum(range(10)) == 45
"""


def _procs(path: str) -> int:
    with open(os.path.join(path, "cgroup.procs")) as fh:
        return len(fh.read().split())


@pytest.mark.slow
async def test_a_fork_and_spin_neighbour_only_slows_itself() -> None:
    # Before per-slot cpu cgroups, 60 spinners in their own sessions (each
    # its own autogroup) turned this correct answer into a timeout on the
    # other slot. The spinner's own verdict stays its timeout.
    limits = Limits(cpu_s=2.0, wall_s=5.0, memory_mb=512, fsize_mb=8, disk_mb=32, nproc=128)
    async with LocalPool(workers=2, limits=limits) as pool:
        if "cgroup-cpu" not in pool.layers or "cgroup-pids" not in pool.layers:
            pytest.skip(f"needs cpu and pids cgroups: {pool.warnings}")
        pids_dirs = [p for s in pool._slots if s.ready for p in s.ready.cgroups if "pids" in p]
        attacker: list[Outcome] = []
        victim: list[Outcome] = []

        async def attack() -> None:
            attacker.append(await pool.run(textwrap.dedent(SPINNERS)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(attack)
            with anyio.fail_after(60):
                # template, candidate, 60 (unless the attacker already ended)
                while max(_procs(p) for p in pids_dirs) < 62 and not attacker:
                    await anyio.sleep(0.01)
            while not attacker:
                victim.append(await pool.run(NEEDS_03_S))
        assert attacker[0].status == "timeout" and "wall-clock" in attacker[0].reason, attacker
        assert len(victim) >= 3
        assert [o.status for o in victim] == ["passed"] * len(victim), victim
        # Both slots, the attacker's included, serve the next candidates.
        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(lambda: _expect_pass(pool))
        assert_nothing_left(pool)


async def _expect_pass(pool: LocalPool) -> None:
    out = await pool.run(NEEDS_03_S)
    assert out.status == "passed", out


V2_ONLY = """
import json, os, shutil, tempfile, textwrap, anyio
import aioeval
from aioeval.errors import SandboxError
from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Limits

LIMITS = Limits(cpu_s=10.0, wall_s=30.0, memory_mb=256, fsize_mb=8, disk_mb=32, nproc=32)
FORKS = '''
import os, time
made = 0
for _ in range(100):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    made += 1
print("made", made)
'''
SPREAD = '''
import os
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(150 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        os._exit(0)
    kids.append(pid)
for pid in kids:
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
'''

async def main():
    report = {}
    async with LocalPool(workers=1, limits=LIMITS, isolation="best") as pool:
        report["layers"], report["missing"] = pool.layers, pool.missing
        report["warnings"] = pool.warnings
        out = await pool.run(FORKS)
        report["forks"] = [out.status, out.output_tail]
        out = await pool.run("x = bytearray(400 * 2**20)")
        report["one_big"] = [out.status, out.reason]
        out = await pool.run(SPREAD)
        report["spread"] = [out.status, out.reason]
    try:
        async with LocalPool(workers=1, limits=LIMITS, isolation="strict"):
            report["strict"] = "started"
    except SandboxError as exc:
        report["strict"] = str(exc)
    out_dir = tempfile.mkdtemp(prefix="aioeval-v2-")
    spec = aioeval.RunSpec(
        benchmark="human-eval",
        platform="llm-mock",
        config=aioeval.load_config(overrides=["params.execute=true", "params.limit=2"]),
        out_dir=out_dir + "/run",
    )
    summary = await aioeval.evaluate(spec)
    with open(out_dir + "/run/summary.json") as fh:
        stored = json.load(fh)
    report["summary"] = [stored["isolation"], stored["missing"], summary.counts]
    shutil.rmtree(out_dir)
    print(json.dumps(report))

anyio.run(main)
"""


def _v2_only_view() -> None:
    """preexec: a mount namespace where /sys/fs/cgroup is only cgroup2."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(namespaces.CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    libc.mount(b"none", b"/", None, namespaces.MS_REC | namespaces.MS_PRIVATE, None)
    if libc.umount2(b"/sys/fs/cgroup", 2) != 0:  # MNT_DETACH: the tmpfs and every v1 mount
        raise OSError(ctypes.get_errno(), "umount2")
    if libc.mount(b"cgroup2", b"/sys/fs/cgroup", b"cgroup2", 0, None) != 0:
        raise OSError(ctypes.get_errno(), "mount cgroup2")


@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup/memory"),
    reason="needs root and a v1 host to build the v2-only view from",
)
def test_a_cgroup_v2_only_view() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", V2_ONLY],
        preexec_fn=_v2_only_view,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    with open("/sys/fs/cgroup/unified/cgroup.controllers") as fh:
        v2_controllers = fh.read().split()
    if {"memory", "pids", "cpu"} <= set(v2_controllers):
        pytest.skip("this host's v2 hierarchy has the controllers: not a missing-layer case")
    expected_missing = ["cgroup-memory", "cgroup-pids", "cgroup-cpu"]
    # Reported: every cgroup layer is missing, and says why (v2, no controller).
    assert report["missing"] == expected_missing, report
    assert all("cgroup v2" in w for w in report["warnings"]), report
    assert report["strict"].startswith("isolation=strict refused: cgroup-memory"), report
    isolation, missing, counts = report["summary"]
    assert missing == expected_missing and counts["passed"] == 2, report
    assert not set(expected_missing) & set(isolation)
    # What still holds: the process cap (the candidates' own uid), the
    # per-process address-space limit, and everything else in force.
    for name in ("unprivileged-uid", "pid-namespace", "ipc-namespace", "seccomp", "landlock"):
        assert name in report["layers"], report
    status, tail = report["forks"]
    assert status == "passed" and int(tail.split()[-1]) < 32, report
    assert report["one_big"][0] == "failed" and "MemoryError" in report["one_big"][1], report
    # What does not: a total over processes (4 x 150 MB under 256 MB each).
    assert report["spread"][0] == "passed", report


def _dead_pid() -> int:
    pid = 4_000_000
    while os.path.exists(f"/proc/{pid}"):
        pid += 1
    return pid


async def test_stale_cgroups_of_a_killed_slot_are_swept_in_every_hierarchy() -> None:
    """A template killed with its engine cannot remove its cgroups; the next
    one removes those named after dead pids, the CPU-accounting hierarchy's
    (cgroup v1 ``cpuacct``) as well as the limits'."""
    mounts = cgroupfs.parse_mountinfo(open("/proc/self/mountinfo").read())
    own = cgroupfs.parse_proc_cgroup(open("/proc/self/cgroup").read())
    v1, _ = cgroupfs.locate(mounts, own, ("cpuacct",))
    base = v1.get("cpuacct")
    if base is None or not os.access(base, os.W_OK):
        pytest.skip("no writable cgroup v1 cpuacct hierarchy here")
    stale = os.path.join(base, f"{cgroups.PREFIX}{_dead_pid()}")
    os.mkdir(stale)
    try:
        async with LocalPool(workers=1, limits=Limits(cpu_s=1.0, wall_s=5.0)):
            pass
        assert not os.path.exists(stale)
    finally:
        if os.path.exists(stale):
            os.rmdir(stale)
