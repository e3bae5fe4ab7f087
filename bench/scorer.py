"""The warm scorer: latency, throughput against ``aioeval score``, memory.

All in one run, 2 workers unless ``--workers``:

- ``batch_ms``: one correct HumanEval answer scored as a service had to
  without a scorer: a samples file and ``aioeval.evaluate`` (pool started
  and closed, a run directory), median over ``--batch`` answers.
- ``warm_ms``: p50 and p99 of one canonical answer at a time (each a new
  text, so none is cached) through ``Scorer.score`` on an idle scorer, and
  ``serve_ms`` the same through ``aioeval serve``'s HTTP front end
  (in-process server on 127.0.0.1, aiohttp client).
- ``throughput``: the 164 x 10 set of ``bench/score_speed.py`` scored by
  ``aioeval score`` (subprocess, interpreter start included) and by
  ``--callers`` concurrent callers through ``Scorer.score`` and through
  HTTP; ratios against ``aioeval score``; verdicts must be identical.
- ``rss``: resident memory after ``--rss-small`` and after ``--rss-large``
  calls of distinct answers (executed; the verdict cache bounded at
  ``--cache``), and their ratio.
- ``cancel``: ``--cancel`` callers, every other one cancelled at a random
  moment (up to 50 ms in): processes left below the pool's templates
  (candidates), slots not back, and verdicts of the callers that were not
  cancelled that differ from their answer's (right or wrong) verdict.

``--trainer`` measures only a trainer's batch over a stdin dataset (see
``bench/trainer_batch.py``): 1,024 answers over 256 problems, per-answer
latency, answers/s against ``aioeval score``, partial credit against a
direct count.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import anyio

import aioeval
from aioeval.executors.local import LocalPool
from aioeval.service import Scorer
from aioeval.service.http import Service
from aioeval.suites.human_eval.suite import load_problems

sys.path.insert(0, str(Path(__file__).parent))
import trainer_batch
from score_speed import make_samples, run_aioeval


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 2**20


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1e3, 2)


async def _batch(cfg: aioeval.RunConfig, n: int, text: str, pid: str) -> list[float]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            samples = Path(tmp) / f"s{i}.jsonl"
            samples.write_text(json.dumps({"task_id": pid, "completion": text + f"\n# {i}\n"}))
            spec = aioeval.RunSpec(
                benchmark="human-eval", config=cfg, samples=str(samples), out_dir=f"{tmp}/r{i}"
            )
            t = time.perf_counter()
            await aioeval.evaluate(spec)
            out.append(time.perf_counter() - t)
    return out


async def _through(
    score: Any, rows: list[tuple[str, str]], callers: int
) -> tuple[float, dict[tuple[str, int], bool]]:
    """Score every row with `callers` concurrent callers; (wall, verdicts)."""
    todo = list(enumerate(rows))
    index: dict[str, int] = {}
    keyed = []
    for _, (task_id, comp) in todo:
        i = index.get(task_id, 0)
        index[task_id] = i + 1
        keyed.append((task_id, i, comp))
    verdicts: dict[tuple[str, int], bool] = {}
    queue = iter(keyed)

    async def caller() -> None:
        for task_id, i, comp in queue:
            verdicts[(task_id, i)] = await score(task_id, comp) == "passed"

    t = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(callers):
            tg.start_soon(caller)
    return time.perf_counter() - t, verdicts


async def main(args: argparse.Namespace) -> dict[str, object]:
    problem = load_problems()[0]
    canonical = problem.fields["canonical_solution"]
    cfg = aioeval.load_config(
        overrides=[f"params.workers={args.workers}", f"params.scoring={args.scoring}"]
    )
    batch = await _batch(cfg, args.batch, canonical, problem.id)
    result: dict[str, object] = {
        "bench": "scorer",
        "workers": args.workers,
        "scoring": args.scoring,
    }
    result["batch_ms"] = round(statistics.median(batch) * 1e3, 1)
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "samples.jsonl"
        rows = make_samples(samples, 10)
        score_wall, score_verdicts = await anyio.to_thread.run_sync(
            run_aioeval, samples, Path(tmp) / "out", args.workers, args.scoring
        )
    async with Scorer(cfg, cache=args.cache) as scorer:
        service = Service(scorer)
        url = await service.start("127.0.0.1", 0) + "/v1/score"
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:

            async def by_library(task_id: str, text: str) -> str:
                return (await scorer.score("human-eval", task_id, text)).status

            async def by_http(task_id: str, text: str) -> str:
                body = {"benchmark": "human-eval", "problem_id": task_id, "completion": text}
                async with http.post(url, json=body) as r:
                    return str((await r.json())["status"])

            await by_library(problem.id, canonical)  # loads the dataset
            for name, score in (("warm_ms", by_library), ("serve_ms", by_http)):
                lat = []
                for i in range(args.calls):
                    t = time.perf_counter()
                    await score(problem.id, canonical + f"\n# {name} {i}\n")
                    lat.append(time.perf_counter() - t)
                result[name] = {"p50": _pct(lat, 0.5), "p99": _pct(lat, 0.99)}
            result["batch_over_warm"] = round(
                result["batch_ms"] / result["warm_ms"]["p50"],  # type: ignore[index,operator]
                1,
            )
            lib_wall, lib_verdicts = await _through(by_library, rows, args.callers)
            scorer._done.clear()  # the HTTP pass executes everything again
            http_wall, http_verdicts = await _through(by_http, rows, args.callers)
        await service.aclose()
        result["throughput"] = {
            "candidates": len(rows),
            "callers": args.callers,
            "score_wall_s": round(score_wall, 2),
            "scorer_wall_s": round(lib_wall, 2),
            "serve_wall_s": round(http_wall, 2),
            "scorer_over_score": round(score_wall / lib_wall, 2),
            "serve_over_score": round(score_wall / http_wall, 2),
            "verdicts_identical": lib_verdicts == score_verdicts == http_verdicts,
        }
        rss = {}
        for i in range(args.rss_large):
            await scorer.score("human-eval", problem.id, canonical + f"\n# rss {i}\n")
            if i + 1 in (args.rss_small, args.rss_large):
                rss[i + 1] = round(_rss_mb(), 1)
        result["rss_mb"] = rss
        result["rss_ratio"] = round(rss[args.rss_large] / rss[args.rss_small], 3)
        result["cancel"] = await _cancelled(scorer, canonical, problem.id, args.cancel)
    return result


async def _cancelled(scorer: Scorer, canonical: str, pid: str, n: int) -> dict[str, int]:
    pool = scorer.pool
    assert isinstance(pool, LocalPool)
    rng = random.Random()
    wrong: list[str] = []
    cancelled = 0

    async def caller(i: int) -> None:
        nonlocal cancelled
        right = i % 3 != 0
        text = (canonical if right else "    return True\n") + f"\n# cancel {i}\n"
        with anyio.CancelScope() as scope:
            if i % 2:
                scope.deadline = anyio.current_time() + rng.uniform(0, 0.05)
            status = (await scorer.score("human-eval", pid, text)).status
            if status != ("passed" if right else "failed"):
                wrong.append(f"{i}: {status}")
        cancelled += scope.cancelled_caught

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(caller, i)
    left = [p for s in pool._slots if s.ready for p in _below(s.ready.pid)]
    return {
        "callers": n,
        "cancelled": cancelled,
        "processes_left": len(left),
        "slots_not_back": pool.size - len(pool._idle),
        "wrong_verdicts": len(wrong),
    }


def _below(pid: int) -> list[int]:
    """Processes below `pid` (its candidates, if any are left)."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/task/{current}/children") as fh:
                kids = [int(x) for x in fh.read().split()]
        except OSError:
            continue
        out += kids
        todo += kids
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scoring", choices=("strict", "official"), default="strict")
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--callers", type=int, default=64)
    parser.add_argument("--cache", type=int, default=1000)
    parser.add_argument("--rss-small", type=int, default=2000)
    parser.add_argument("--rss-large", type=int, default=20000)
    parser.add_argument("--cancel", type=int, default=1000)
    parser.add_argument(
        "--trainer", action="store_true", help="only the trainer's batch (bench/trainer_batch.py)"
    )
    args = parser.parse_args()
    if args.trainer:
        print(json.dumps({"trainer_batch": anyio.run(trainer_batch.measure, args.workers)}))
    else:
        print(json.dumps(anyio.run(main, args)))
