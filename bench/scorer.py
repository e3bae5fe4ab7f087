"""The warm scorer against a batch run per answer, same process, same run.

- ``batch_ms``: one correct HumanEval answer scored the way a service had
  to before: write a samples file, ``aioeval.evaluate`` (a pool started and
  closed, a run directory), median over ``--batch`` answers.
- ``warm_ms``: the same answer through a started `aioeval.service.Scorer`,
  median over ``--calls`` distinct answers (none cached).
- ``per_s``: distinct answers per second with ``--callers`` concurrent
  callers on the same scorer.
- ``rss_mb``: the process's resident memory after ``--cached`` calls that
  the cache answers (distinct answers beyond the cache bound), against
  the figure before them: flat means the bound holds.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import anyio

import aioeval
from aioeval.service import Scorer
from aioeval.suites.human_eval import load_problems


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 2**20


async def main(args: argparse.Namespace) -> dict[str, object]:
    problem = load_problems()[0]
    canonical = problem.fields["canonical_solution"]
    cfg = aioeval.load_config()
    batch = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.batch):
            samples = Path(tmp) / f"s{i}.jsonl"
            row = {"task_id": problem.id, "completion": canonical + f"\n# {i}\n"}
            samples.write_text(json.dumps(row) + "\n")
            spec = aioeval.RunSpec(
                benchmark="human-eval", config=cfg, samples=str(samples), out_dir=f"{tmp}/r{i}"
            )
            t = time.perf_counter()
            await aioeval.evaluate(spec)
            batch.append(time.perf_counter() - t)
    async with Scorer(cfg, cache=args.cache) as scorer:
        await scorer.score("human-eval", problem.id, canonical)  # loads the dataset
        warm = []
        for i in range(args.calls):
            t = time.perf_counter()
            await scorer.score("human-eval", problem.id, canonical + f"\n# warm {i}\n")
            warm.append(time.perf_counter() - t)
        counter = iter(range(10**9))

        async def caller(n: int) -> None:
            for _ in range(n):
                text = canonical + f"\n# many {next(counter)}\n"
                await scorer.score("human-eval", problem.id, text)

        t = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(args.callers):
                tg.start_soon(caller, args.calls // args.callers)
        per_s = (args.calls // args.callers * args.callers) / (time.perf_counter() - t)
        # Fill the cache, then keep asking: answers the cache holds cost no
        # execution; the memory must not grow with the number of calls.
        for i in range(args.cache):
            await scorer.score("human-eval", problem.id, canonical + f"\n# fill {i}\n")
        before = _rss_mb()
        executed = scorer.executed
        for i in range(args.cached):
            await scorer.score("human-eval", problem.id, canonical + f"\n# fill {i % 8}\n")
        after = _rss_mb()
    return {
        "bench": "scorer",
        "batch_ms": round(statistics.median(batch) * 1e3, 1),
        "warm_ms": round(statistics.median(warm) * 1e3, 2),
        "batch_over_warm": round(statistics.median(batch) / statistics.median(warm), 1),
        "callers": args.callers,
        "per_s": round(per_s, 1),
        "cached_calls": args.cached,
        "executed_during_cached": scorer.executed - executed,
        "rss_mb_before": round(before, 1),
        "rss_mb_after": round(after, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--callers", type=int, default=16)
    parser.add_argument("--cache", type=int, default=1000)
    parser.add_argument("--cached", type=int, default=100_000)
    args = parser.parse_args()
    print(json.dumps(anyio.run(main, args)))
