"""The floor under any evaluator: the CPU the candidates' own code needs
for every test, run in one plain process (no sandbox, no comparison with
expected output), and the wall a per-test time limit forces on stalling
answers. ``floor_wall_s`` is that work spread over the workers; the best
ratio any evaluator could reach over upstream is upstream's wall over it.

Used by ``evalplus_parity.py`` and ``lcb_parity.py``; run as a script it
reads the jobs (a JSON list) from the file named on its command line and
prints ``{"cpu_s", "stalled_s", "inputs"}``. The answers it runs are the
benches' own (fixture samples, ``lcb_answers``), never model output.

A job is ``{"mode", "code", "entry", "inputs"}``; ``mode`` is ``call`` (a
function named ``entry`` called with each input's argument list), ``stdin``
(the program run with each input as its standard input) or ``method``
(``Solution().entry`` called with each input's lines as JSON arguments).
An answer stops at its first exception or stall, as first-failure scoring
stops it; a wrong answer runs all its inputs, so the floor is an upper
bound on the candidates' share.
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


class _Stalled(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Stalled


@contextlib.contextmanager
def _quiet(stdin: str) -> Iterator[None]:
    saved = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = io.StringIO(stdin), io.StringIO()
    try:
        yield
    finally:
        sys.stdin, sys.stdout = saved


def _calls(job: dict[str, Any]) -> Iterator[Callable[[], object]]:
    """One thunk per input: the candidate's work for that input."""
    mode, code, entry = job["mode"], job["code"], job["entry"]
    if mode == "stdin":
        program = compile(code, "<answer>", "exec")
        for text in job["inputs"]:

            def run(text: str = text) -> object:
                with _quiet(text), contextlib.suppress(SystemExit):  # a program may exit
                    exec(program, {"__name__": "__main__"})
                return None

            yield run
        return
    ns: dict[str, Any] = {"__name__": "__answer__"}
    with _quiet(""):
        exec(code, ns)
    if mode == "method":
        fn = getattr(ns["Solution"](), entry)
        for text in job["inputs"]:
            args = [json.loads(line) for line in text.split("\n")]
            yield _bind(fn, args)
    else:
        fn = ns[entry]
        for args in job["inputs"]:
            yield _bind(fn, args)


def _bind(fn: Callable[..., object], args: list[Any]) -> Callable[[], object]:
    return lambda: fn(*args)


def run_jobs(jobs: list[dict[str, Any]], limit_s: float) -> dict[str, float]:
    """Run every job's inputs here; CPU spent and wall lost to stalls."""
    signal.signal(signal.SIGALRM, _alarm)
    stalled, inputs = 0.0, 0
    cpu0 = time.process_time()
    for job in jobs:
        try:
            for call in _calls(job):
                inputs += 1
                t0 = time.perf_counter()
                signal.setitimer(signal.ITIMER_REAL, limit_s)
                try:
                    with _quiet(""):
                        call()
                except _Stalled:
                    stalled += time.perf_counter() - t0
                    break
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except _Stalled:
            continue
        except BaseException:  # the answer's own failure ends its run
            continue
    cpu = time.process_time() - cpu0
    return {"cpu_s": round(cpu, 3), "stalled_s": round(stalled, 3), "inputs": inputs}


def measure(jobs: list[dict[str, Any]], limit_s: float) -> dict[str, float]:
    """``run_jobs`` in a fresh interpreter, so no answer touches this one."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(jobs, f)
    try:
        out = subprocess.run(
            [sys.executable, __file__, f.name, str(limit_s)],
            capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        Path(f.name).unlink()
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def floor(plain: dict[str, float], workers: int, theirs_wall: float) -> dict[str, float]:
    """The floor figure: plain work over the workers, and upstream's wall over it."""
    wall = (plain["cpu_s"] + plain["stalled_s"]) / workers
    return {**plain, "floor_wall_s": round(wall, 3), "best_ratio": round(theirs_wall / wall, 2)}


def children_cpu() -> float:
    """CPU of this process and its reaped descendants so far (user + system)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    result = run_jobs(json.loads(Path(sys.argv[1]).read_text()), float(sys.argv[2]))
    print(json.dumps(result), file=sys.__stdout__)
