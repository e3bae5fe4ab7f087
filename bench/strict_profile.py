"""Where a strict candidate's CPU goes, phase by phase, against official.

Each case is one ``aioeval score`` run (subprocess, as a user runs it)
under system-wide sampling (``perf record -a``; needs perf and the right to
use it, else the bench says so and stops). Every sample is charged to a
process of the run by the fork tree perf records: the engine (the
``aioeval`` process and its threads), a template (the slot's long-lived
process that forks candidates), a candidate (a template's child and its
descendants), a verifier (the trusted process that runs the test). Inside
each process the samples are sorted by what the kernel or the interpreter
was doing:

- ``fork``: the template copying its page tables into a child;
- ``faults``: page faults, copy-on-write copies of the template's pages;
- ``teardown``: unmapping and freeing a process's memory as it exits;
- ``switch``: scheduling, wake-ups and sleeping;
- ``ipc``: socket and pipe reads and writes, poll;
- ``memory``: the rest of the kernel's memory work for those three (page
  allocation and freeing, memory-cgroup charging, reverse maps, VMAs);
- ``kernel``: the rest of the kernel (mounts, namespaces, cgroups, files);
- ``python``: the interpreter and its extension modules (the program, the
  test, the engine's and the harness's own code).

Cases (``--only`` picks some):

- ``humaneval``: the 164 x 10 set of ``bench/score_speed.py`` (five correct,
  five wrong per problem), strict and official scoring.
- ``evalplus``: the HumanEval+ fixture's samples of
  ``bench/evalplus_parity.py`` (no stalls), ``--per-problem`` / 2 times
  over, strict and official scoring, the reference outputs cached first.
- ``calls``: one problem whose test calls the candidate ``--calls`` times,
  and the same problem with one call, ``--per-problem`` answers each, strict
  and official; the difference over the extra calls is the per-call cost of
  each role and phase.

Figures are microseconds of CPU per candidate (``calls``: per extra call),
each cell a role and a phase, plus each case's wall time and candidates.
The sampling costs a few percent; every cell of one case bears it alike.
Prints one JSON line per case and, with ``--table``, a text table.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from score_speed import make_samples

ROLES = ("engine", "template", "candidate", "verifier")
PHASES = ("fork", "faults", "teardown", "memory", "switch", "ipc", "kernel", "python")
_KERNEL = {
    "fork": ("copy_page_range", "dup_mm", "dup_mmap", "anon_vma_clone", "anon_vma_fork",
             "copy_process", "copy_pte", "copy_p"),
    "faults": ("page_fault", "do_wp_page", "handle_mm_fault", "copy_mc", "do_anonymous",
               "wp_page", "filemap_map", "next_uptodate", "do_fault", "clear_page"),
    "teardown": ("unmap_page", "zap_", "free_pages", "free_pgtables", "exit_mmap",
                 "tlb_", "release_pages", "folio_remove_rmap", "unlink_anon", "free_unref",
                 "remove_vma", "__put_anon", "mmput"),
    "switch": ("schedule", "finish_task_switch", "try_to_wake_up", "_raw_spin_unlock_irq",
               "enqueue", "dequeue", "update_curr", "pick_next", "native_write_msr",
               "select_task_rq", "ttwu", "idle"),
    "ipc": ("unix_", "sock_", "sys_recv", "sys_send", "skb", "pipe_", "do_sys_poll",
            "poll", "__sys_", "scm_", "fdget", "wait4", "do_wait"),
    "memory": ("page", "folio", "pte", "pmd", "vma", "vm_", "mas_", "memcg", "mem_cgroup",
               "lruvec", "anon_vma", "rmap", "slab", "kmem_cache", "alloc_pages", "charge",
               "mm_", "_mm", "lru", "swap", "xas_", "pcp", "buddy", "zone"),
}  # fmt: skip
_SAMPLE = re.compile(r"^\s*(\d+)/(\d+)\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")
_FORK = re.compile(r"PERF_RECORD_FORK\((\d+):(\d+)\):\((\d+):(\d+)\)")


def phase_of(symbol: str, dso: str) -> str:
    if "kernel" not in dso:
        return "python"
    for phase, marks in _KERNEL.items():
        if any(m in symbol for m in marks):
            return phase
    return "kernel"


def profile(cmd: list[str], work: Path, rate: int) -> tuple[dict[str, dict[str, int]], float]:
    """Run `cmd` under ``perf record -a``; samples per role and phase, the
    run's wall time."""
    data = work / "perf.data"
    perf = subprocess.Popen(
        ["perf", "record", "-a", "-F", str(rate), "-o", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)  # perf's ring buffers are mapped before the run starts
    t0 = time.perf_counter()
    run = subprocess.Popen(cmd)
    kinds = _watch(run)
    wall = time.perf_counter() - t0
    if run.returncode:
        sys.exit(f"strict_profile: {cmd[3:6]} exited {run.returncode}")
    perf.send_signal(signal.SIGINT)
    perf.wait()
    script = subprocess.run(
        ["perf", "script", "-i", str(data), "--show-task-events", "-F", "pid,tid,ip,sym,dso"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    parent: dict[int, int] = {}
    counts: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for line in script.splitlines():
        fork = _FORK.search(line)
        if fork:
            child, ppid = int(fork.group(1)), int(fork.group(3))
            if child != ppid:  # a thread's "fork" keeps its process id
                parent.setdefault(child, ppid)
            continue
        m = _SAMPLE.match(line)
        if m:
            counts[int(m.group(1))][phase_of(m.group(3), m.group(4))] += 1
    table = {r: dict.fromkeys(PHASES, 0) for r in ROLES}
    for pid, by_phase in counts.items():
        role = _role(pid, run.pid, parent, kinds)
        if role:
            for phase, n in by_phase.items():
                table[role][phase] += n
    return table, wall


def _watch(run: subprocess.Popen[bytes]) -> dict[int, str]:
    """What each of the run's direct children is (a slot's worker or a
    verifier), read from their command lines while the run goes on."""
    kinds: dict[int, str] = {}
    while run.poll() is None:
        for task in Path(f"/proc/{run.pid}/task").glob("*/children"):
            try:
                pids = [int(p) for p in task.read_text().split()]
            except OSError:
                continue
            for pid in pids:
                if pid in kinds:
                    continue
                try:
                    args = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                if b"aioeval.sandbox.strict.verifier" in args:
                    kinds[pid] = "verifier"
                elif b"aioeval.sandbox.process.worker" in args:
                    kinds[pid] = "worker"
        time.sleep(0.05)
    return kinds


def _role(pid: int, root: int, parent: dict[int, int], kinds: dict[int, str]) -> str | None:
    chain = [pid]
    while chain[-1] != root:
        up = parent.get(chain[-1])
        if up is None or len(chain) > 64:
            return None  # not of this run
        chain.append(up)
    if len(chain) == 1:
        return "engine"
    kind = kinds.get(chain[-2])
    if kind == "verifier":
        return "verifier"
    if kind == "worker":
        # the worker's own process and the slot's template (its child, init
        # of the slot's PID namespace) are one role; below them, candidates
        return "template" if len(chain) <= 3 else "candidate"
    return None


def per_item(table: dict[str, dict[str, int]], rate: int, items: int) -> dict[str, Any]:
    us = 1e6 / rate / items
    cells = {r: {p: round(n * us, 1) for p, n in table[r].items()} for r in ROLES}
    for r in ROLES:
        cells[r]["total"] = round(sum(table[r].values()) * us, 1)
    cells["all"] = {p: round(sum(table[r][p] for r in ROLES) * us, 1) for p in PHASES}
    cells["all"]["total"] = round(sum(cells[r]["total"] for r in ROLES), 1)
    return cells


def score_cmd(
    samples: Path, out: Path, scoring: str, workers: int, dataset: Path | None,
    benchmark: str = "human-eval",
) -> list[str]:  # fmt: skip
    cmd = [sys.executable, "-m", "aioeval", "score", "--benchmark", benchmark,
           "--samples", str(samples), "--out", str(out), "--quiet",
           "--set", f"params.workers={workers}", "--set", f"params.scoring={scoring}"]  # fmt: skip
    return cmd + (["--dataset", str(dataset)] if dataset else [])


CALLS_PROMPT = 'def f(x: int) -> int:\n    """Twice x, plus one."""\n'
CALLS_TEST = (
    "def check(candidate):\n    for i in range({n}):\n        assert candidate(i) == 2 * i + 1\n"
)


def calls_files(work: Path, calls: int, per_problem: int) -> tuple[Path, Path, Path]:
    rows = []
    for n in (1, calls):
        rows.append({"task_id": f"Calls/{n}", "prompt": CALLS_PROMPT, "entry_point": "f",
                     "canonical_solution": "    return x * 2 + 1\n",
                     "test": CALLS_TEST.format(n=n)})  # fmt: skip
    dataset = work / "calls.jsonl"
    dataset.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    paths = []
    for n in (1, calls):
        p = work / f"calls_{n}.jsonl"
        p.write_bytes(
            b"".join(
                orjson.dumps(
                    {"task_id": f"Calls/{n}", "completion": f"    return x * 2 + 1  # {i}\n"}
                )
                + b"\n"
                for i in range(per_problem)
            )
        )
        paths.append(p)
    return dataset, paths[0], paths[1]


def evalplus_samples(path: Path, repeat: int) -> int:
    """The parity bench's HumanEval+ samples, each ``repeat`` times."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import evalplus_fixture

    rows = evalplus_fixture.samples(evalplus_fixture.problem_rows("humaneval"), "humaneval", 3.0)
    rows = [r for r in rows if r["kind"] != "stall" for _ in range(repeat)]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="humaneval,calls")
    ap.add_argument("--per-problem", type=int, default=10)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rate", type=int, default=1999, help="samples per second per CPU")
    ap.add_argument("--table", action="store_true", help="also print a text table")
    args = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("strict_profile: needs perf (apt-get install linux-perf or linux-tools)")
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "humaneval" in only:
            samples = work / "samples.jsonl"
            n = len(make_samples(samples, args.per_problem))
            for scoring in ("strict", "official"):
                cmd = score_cmd(samples, work / scoring, scoring, args.workers, None)
                table, wall = profile(cmd, work, args.rate)
                emit(args, {"case": "humaneval", "scoring": scoring, "candidates": n,
                            "wall_s": round(wall, 2), "us_per_candidate": per_item(table, args.rate, n)})  # fmt: skip
        if "evalplus" in only:
            n = evalplus_samples(work / "evalplus.jsonl", max(1, args.per_problem // 2))
            os.environ["AIOEVAL_CACHE_DIR"] = str(work / "cache")
            for scoring in ("warm", "strict", "official"):
                cmd = score_cmd(work / "evalplus.jsonl", work / f"ep-{scoring}",
                                "strict" if scoring == "warm" else scoring, args.workers,
                                None, "humaneval-plus")  # fmt: skip
                if scoring == "warm":
                    subprocess.run(cmd, check=True)
                    continue
                table, wall = profile(cmd, work, args.rate)
                emit(args, {"case": "evalplus", "scoring": scoring, "candidates": n,
                            "wall_s": round(wall, 2), "us_per_candidate": per_item(table, args.rate, n)})  # fmt: skip
        if "calls" in only:
            dataset, one, many = calls_files(work, args.calls, args.per_problem * 10)
            n = args.per_problem * 10
            for scoring in ("strict", "official"):
                runs = []
                for name, path in (("one", one), ("many", many)):
                    cmd = score_cmd(
                        path, work / f"{scoring}-{name}", scoring, args.workers, dataset
                    )
                    runs.append(profile(cmd, work, args.rate))
                (t1, w1), (tn, wn) = runs
                extra = {r: {p: tn[r][p] - t1[r][p] for p in PHASES} for r in ROLES}
                emit(args, {"case": "calls", "scoring": scoring, "candidates": n,
                            "calls": args.calls, "wall_s": [round(w1, 2), round(wn, 2)],
                            "us_per_call": per_item(extra, args.rate, n * (args.calls - 1))})  # fmt: skip


def emit(args: argparse.Namespace, row: dict[str, Any]) -> None:
    print(orjson.dumps({"bench": "strict_profile", **row}).decode(), flush=True)
    if not args.table:
        return
    cells = row.get("us_per_candidate") or row["us_per_call"]
    print(f"{'':10}" + "".join(f"{p:>10}" for p in (*PHASES, "total")))
    for r in (*ROLES, "all"):
        print(f"{r:10}" + "".join(f"{cells[r][p]:>10.1f}" for p in (*PHASES, "total")))


if __name__ == "__main__":
    main()
