"""What one answer costs each process of a slot, strict against official scoring.

The 164 x ``--per-problem`` set of ``bench/score_speed.py`` (half correct,
half wrong) runs through one real pool of ``--workers`` slots, once with
strict scoring (the test in the verifier, one fresh child per check) and
once with official scoring (the test in the candidate's process), after
``--warm`` answers that are not counted. For each role the kernel's own
counters (``/proc/<pid>/stat``) give CPU time and minor page faults per
answer: the verifier process itself (reading the check, forking, waiting,
sweeping) and its check children (isolation, the test, copy-on-write faults
of the pages they write, exit), the template and its candidates' children,
and the engine. A fault there is almost always a copy of a page the child
shares with its parent.

Prints one JSON line: per answer, ``cpu_ms`` and ``faults`` of each role in
each scoring model, their totals, and the wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import orjson

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Checked, Program
from aioeval.suites.human_eval.suite import build_program, checked_task

sys.path.insert(0, str(Path(__file__).resolve().parent))
from score_speed import variants

TICK = os.sysconf("SC_CLK_TCK")
FIELDS = ("faults", "child_faults", "cpu", "child_cpu")


def _stat(pid: int) -> dict[str, float]:
    raw = Path(f"/proc/{pid}/stat").read_text()
    f = raw[raw.rindex(")") + 2 :].split()
    return {
        "faults": int(f[7]),
        "child_faults": int(f[8]),
        "cpu": (int(f[11]) + int(f[12])) / TICK,
        "child_cpu": (int(f[13]) + int(f[14])) / TICK,
    }


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        out += [int(p) for p in task.read_text().split()]
    return out


def _forkers() -> dict[str, list[int]]:
    """The slots' forking processes by role: each started process's own
    child (its init, in a PID namespace of its own) where it has one."""
    roles: dict[str, list[int]] = {"verifier": [], "template": []}
    for pid in _children(os.getpid()):
        argv = Path(f"/proc/{pid}/cmdline").read_bytes()
        role = "verifier" if b"strict.verifier" in argv else "template"
        roles[role].append((_children(pid) or [pid])[0])
    return roles


def _sum(pids: list[int]) -> dict[str, float]:
    rows = [_stat(p) for p in pids]
    return {k: sum(r[k] for r in rows) for k in FIELDS}


def _tasks(per_problem: int, strict: bool) -> list[Checked | Program]:
    return [
        checked_task(p, comp) if strict else Program(program=build_program(p, comp))
        for p, comp in variants(per_problem)
    ]


async def _run(pool: LocalPool, tasks: list[Checked | Program], workers: int) -> None:
    queue = iter(tasks)

    async def slot() -> None:
        for task in queue:
            await pool.execute(task)

    async with anyio.create_task_group() as tg:
        for _ in range(workers):
            tg.start_soon(slot)


async def measure(scoring: str, per_problem: int, workers: int, warm: int) -> dict[str, Any]:
    tasks = _tasks(per_problem, scoring == "strict")
    async with LocalPool(workers=workers, verifiers=scoring == "strict") as pool:
        await _run(pool, tasks[:warm], workers)
        roles = {k: v for k, v in _forkers().items() if v}
        before = {k: _sum(v) for k, v in roles.items()}
        engine0, t0 = os.times(), time.perf_counter()
        await _run(pool, tasks, workers)
        engine1, wall = os.times(), time.perf_counter() - t0
        after = {k: _sum(v) for k, v in roles.items()}
    n = len(tasks)
    out: dict[str, Any] = {"wall_ms": round(wall * 1e3 / n, 3)}
    for role in roles:
        d = {k: after[role][k] - before[role][k] for k in FIELDS}
        kids = "checks" if role == "verifier" else "candidates"
        out[role] = {"cpu_ms": round(d["cpu"] * 1e3 / n, 3), "faults": round(d["faults"] / n, 1)}
        out[kids] = {
            "cpu_ms": round(d["child_cpu"] * 1e3 / n, 3),
            "faults": round(d["child_faults"] / n, 1),
        }
    spent = engine1.user + engine1.system - engine0.user - engine0.system
    out["engine"] = {"cpu_ms": round(spent * 1e3 / n, 3)}
    out["total_cpu_ms"] = round(sum(v["cpu_ms"] for v in out.values() if type(v) is dict), 3)
    return out


async def main(args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"bench": "check_cost", "workers": args.workers}
    row["loadavg_before"] = round(os.getloadavg()[0], 2)
    for scoring in ("strict", "official"):
        row[scoring] = await measure(scoring, args.per_problem, args.workers, args.warm)
        row["answers"] = 164 * args.per_problem
    row["strict_over_official_cpu"] = round(
        row["strict"]["total_cpu_ms"] / row["official"]["total_cpu_ms"], 2
    )
    return row


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-problem", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--warm", type=int, default=40)
    print(orjson.dumps(anyio.run(main, parser.parse_args())).decode())
