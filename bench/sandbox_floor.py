"""What the sandbox's isolation layers cost, against the fork floor, same run.

Three throughputs (executions per second, all cores busy):

- floor: the least a fork-per-candidate design can do. One warm, lean
  interpreter per core forks, the child execs a trivial check and reports
  over a pipe, the parent reads and reaps. No limits, no isolation, no
  engine.
- minimal / best: `LocalPool` (engine, protocol, template, harness) running
  the same trivial check with ``isolation=minimal`` and ``isolation=best``.

Each round runs the checks for all three in alternating blocks (floor,
minimal, best, floor, ...), so load from elsewhere on a shared machine hits
all three alike; each figure is the median over rounds. Ratios: best/minimal (target >= 0.75)
and best/floor (pool/floor, target >= 0.6).

``cpu_us_per_check`` is the CPU each contender spent per check (floor: its
loops; pools: the engine, the templates and every candidate they reaped),
which a busy machine disturbs far less than throughput; ``best_cpu_over_minimal``
is what the isolation layers cost, as a factor.

``layer_us`` is each per-candidate layer step on its own (the child half of
`layers.confine_child`, timed inside fresh forks of a process that set the
layers up, median; plus the template's per-candidate bookkeeping, mean:
work dir, `layers.clear` (cgroup.procs read, three IPC_INFO calls), the OOM
counter, the two RUSAGE_CHILDREN reads of the starved-timeout check).
``syscall_ns_added`` is what the template's layers add to a cheap syscall
(getppid, timed before and after `layers.setup`): mostly the seccomp
filter's entry path, plus the PID namespace's pid translation.
Template setup (once per slot, PID/IPC/network/mount namespaces, cgroups,
Landlock ruleset, seccomp filter) is reported as ``setup_ms``.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import anyio

from aioeval.executors.local import LocalPool
from aioeval.sandbox.isolation import fairness, landlock_rules, layers
from aioeval.sandbox.protocol import Limits

CHECK = "def f(x):\n    return x + 1\nassert f(1) == 2\n"


FLOOR = """
import os, sys, time
code, n = sys.argv[1], int(sys.argv[2])
sys.stdin.read(1)  # start together
t0 = time.perf_counter()
c0 = os.times()
for _ in range(n):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        exec(compile(code, "<check>", "exec"), {})
        os.write(w, b"P")
        os._exit(0)
    os.close(w)
    ok = os.read(r, 16) == b"P"
    os.close(r)
    os.waitpid(pid, 0)
    assert ok
c1 = os.times()
cpu = sum(c1[:4]) - sum(c0[:4])
print(time.perf_counter() - t0, cpu)
"""


def floor_seconds(total: int, procs: int) -> tuple[float, float]:
    """Loop time and CPU time of the bare fork-exec-report loop over
    `total` checks.

    Each core gets its own lean interpreter (``-S``, nothing imported), as
    a sandbox template is; they start together and the time is the slowest
    one's loop (interpreter start-up excluded); CPU is all loops' together.
    """
    kids = []
    for i in range(procs):
        share = total // procs + (1 if i < total % procs else 0)
        cmd = [sys.executable, "-S", "-c", FLOOR, CHECK, str(share)]
        kids.append(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    for kid in kids:
        assert kid.stdin is not None
        kid.stdin.write("g")
        kid.stdin.close()
    walls, cpu = [], 0.0
    for kid in kids:
        assert kid.stdout is not None
        wall, used = kid.stdout.read().split()
        walls.append(float(wall))
        cpu += float(used)
        kid.wait()
    return max(walls), cpu


def _process_cpu(pid: int) -> float:
    """CPU seconds of `pid` and of the children it reaped (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _pool_cpu(pool: LocalPool) -> float:
    """CPU seconds so far of the engine and of the pool's templates with
    every candidate they reaped."""
    templates = [s.ready.pid for s in pool._slots if s.ready is not None]
    return time.process_time() + sum(_process_cpu(pid) for pid in templates)


async def pool_seconds(pool: LocalPool, total: int) -> tuple[float, float]:
    """Wall time and CPU time (engine, templates, candidates) for `pool` to
    run `total` trivial checks, all slots busy."""
    todo = iter(range(total))
    bad = 0

    async def runner() -> None:
        nonlocal bad
        for _ in todo:
            if (await pool.run(CHECK)).status != "passed":
                bad += 1

    cpu0 = _pool_cpu(pool)
    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(pool.size * 2):
            tg.start_soon(runner)
    wall = time.perf_counter() - t0
    if bad:
        raise SystemExit(f"{bad} trivial checks did not pass under isolation={pool.isolation}")
    return wall, _pool_cpu(pool) - cpu0


async def interleaved(
    total: int, rounds: int, block: int, workers: int
) -> tuple[dict[str, list[float]], dict[str, list[float]], list[str]]:
    """Per round, `total` checks for each contender, run in alternating
    blocks so a burst of load from elsewhere hits all three alike. Returns
    checks/s and CPU microseconds per check, per round."""
    limits = Limits(cpu_s=3.0, wall_s=10.0)
    rates: dict[str, list[float]] = {"floor": [], "minimal": [], "best": []}
    cpu_us: dict[str, list[float]] = {"floor": [], "minimal": [], "best": []}
    async with (
        LocalPool(workers=workers, limits=limits, isolation="minimal") as minimal,
        LocalPool(workers=workers, limits=limits, isolation="best") as best,
    ):
        for pool in (minimal, best):
            await pool.run(CHECK)  # warm
        for _ in range(rounds):
            spent = dict.fromkeys(rates, 0.0)
            used = dict.fromkeys(rates, 0.0)
            done = 0
            while done < total:
                n = min(block, total - done)
                for name, (wall, cpu) in (
                    ("floor", floor_seconds(n, workers)),
                    ("minimal", await pool_seconds(minimal, n)),
                    ("best", await pool_seconds(best, n)),
                ):
                    spent[name] += wall
                    used[name] += cpu
                done += n
            for name, seconds in spent.items():
                rates[name].append(total / seconds)
                cpu_us[name].append(used[name] / total * 1e6)
        return rates, cpu_us, best.layers


def _step_us(step: Callable[[], None], n: int, warm: bool = True) -> tuple[float, float]:
    """Median time of `step` run first thing in a freshly forked child
    (cold: includes the copy-on-write faults its first run causes) and of
    the same step run again right after (warm: the syscalls themselves).

    Timed inside the child, so the fork itself (noisy on a shared machine)
    is not part of the figure.
    """
    times = []
    for _ in range(n):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                t0 = time.perf_counter()
                step()
                t1 = time.perf_counter()
                if warm:
                    step()
                t2 = time.perf_counter()
                os.write(w, struct.pack("dd", t1 - t0, t2 - t1))
            finally:
                os._exit(0)
        os.close(w)
        data = os.read(r, 16)
        os.close(r)
        os.waitpid(pid, 0)
        times.append(struct.unpack("dd", data))
    return (
        statistics.median(t[0] for t in times) * 1e6,
        statistics.median(t[1] for t in times) * 1e6,
    )


def _layer_costs(n: int, out_fd: int, work: str) -> None:
    """In a throwaway process: set the layers up, time each step per fork.

    `layers.setup` forks once (this process stays behind as the wrapper of
    the PID namespace); the rest runs in its init, which has the filter.
    """
    before_ns = _getppid_ns()
    t0 = time.perf_counter()
    conf = layers.setup(
        mode="best", work_root=work, memory_mb=2048, disk_mb=256, nproc=512, site_dirs=sys.path
    )
    setup_ms = (time.perf_counter() - t0) * 1000
    syscall_ns = _getppid_ns() - before_ns
    uid = conf.uid
    ruleset = conf.ruleset_fd

    def oom_adj() -> None:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")

    def drop_uid() -> None:
        assert uid is not None
        if os.getuid() == 0:  # the warm rerun may only repeat the set*id calls
            os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)

    def landlock() -> None:
        landlock_rules._libc.prctl(landlock_rules.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        landlock_rules._libc.syscall(landlock_rules.SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)

    def bookkeeping() -> None:
        d = os.path.join(work, "job")
        os.mkdir(d)
        if uid is not None:
            os.chown(d, uid, uid)
        fairness.children_cpu_ms()
        layers.clear(conf)
        layers.oom_kills(conf)
        fairness.children_cpu_ms()
        os.rmdir(d)

    steps: dict[str, Callable[[], None]] = {"cgroup oom_score_adj": oom_adj}
    if uid is not None:
        steps["unprivileged-uid"] = drop_uid
    if ruleset is not None:
        steps["landlock"] = landlock
    costs: dict[str, object] = {}
    for name, step in steps.items():
        cold, warm = _step_us(step, n)
        costs[name] = {"cold": round(cold, 1), "warm": round(warm, 1)}
    t0 = time.perf_counter()
    for _ in range(n):
        bookkeeping()
    costs["template bookkeeping (work dir, clear, oom counter, rusage)"] = round(
        (time.perf_counter() - t0) / n * 1e6, 1
    )
    facts = {
        "layer_us": costs,
        "syscall_ns_added": round(syscall_ns, 1),
        "setup_ms": round(setup_ms, 2),
        "setup_layers": conf.layers,
    }
    os.write(out_fd, json.dumps(facts).encode())
    layers.teardown(conf)


def _getppid_ns(n: int = 200_000) -> float:
    """Median over 5 runs of one getppid() call, in ns (Python overhead included)."""
    runs = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            os.getppid()
        runs.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(runs)


def layer_costs(n: int) -> dict[str, object]:
    # Created and removed out here: the child mounts a tmpfs on `work` in
    # its own mount namespace.
    root = tempfile.mkdtemp(prefix="aioeval-bench-layers-")
    os.chmod(root, 0o711)
    work = os.path.join(root, "slot")
    os.mkdir(work)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            _layer_costs(n, w, work)
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    shutil.rmtree(root, ignore_errors=True)
    return json.loads(data) if data else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--block", type=int, default=500)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--layer-forks", type=int, default=500)
    args = parser.parse_args()
    rates, cpu_us, best_layers = anyio.run(
        interleaved, args.checks, args.rounds, args.block, args.workers
    )
    med = {k: statistics.median(v) for k, v in rates.items()}
    cpu = {k: statistics.median(v) for k, v in cpu_us.items()}
    print(
        json.dumps(
            {
                "bench": "sandbox_floor",
                "checks": args.checks,
                "workers": args.workers,
                "rounds": args.rounds,
                "block": args.block,
                "floor_per_s": round(med["floor"], 1),
                "minimal_per_s": round(med["minimal"], 1),
                "best_per_s": round(med["best"], 1),
                "best_over_minimal": round(med["best"] / med["minimal"], 3),
                "best_over_floor": round(med["best"] / med["floor"], 3),
                "minimal_over_floor": round(med["minimal"] / med["floor"], 3),
                "rounds_per_s": {k: [round(x, 1) for x in v] for k, v in rates.items()},
                "cpu_us_per_check": {k: round(v, 1) for k, v in cpu.items()},
                "best_cpu_over_minimal": round(cpu["best"] / cpu["minimal"], 3),
                "best_layers": best_layers,
                **layer_costs(args.layer_forks),
            }
        )
    )


if __name__ == "__main__":
    main()
