"""A trainer's batch: 1,024 answers over 256 stdin problems (``io-tests``),
scored as a reward function would score them.

Problems and answers are generated here (deterministic): each problem reads
integers and prints one figure of them; each has ``--tests`` tests and four
answers: right, right only on small inputs, right only on short lists, and
a crash on some inputs. Every answer's program mirrors a Python function
here, so the tests each answer passes are counted directly as well.

- ``trainer``: ``Scorer.score_many`` over the batch, callers' problems as
  dicts, per-test detail on: answers/s, and per-answer latency p50/p99 of
  the same answers scored by as many callers as slots (no queueing).
- ``score``: ``aioeval score --dataset`` on the same problems and answers
  with partial credit too (subprocess, interpreter start included), answers/s; ``ratio`` is the
  trainer's answers/s over it; verdicts must be identical.
- ``partial``: tests passed summed over the batch as the scorer reported
  them and as counted directly, and answers whose count differs (must be 0).

Prints one JSON line. Also run by ``bench/scorer.py --trainer``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio

import aioeval
from aioeval.service import Scorer

Rule = Callable[[list[int]], int]
FIGURES: list[tuple[str, Rule]] = [
    ("sum(xs)", sum),
    ("max(xs)", max),
    ("min(xs)", min),
    ("sum(x * x for x in xs)", lambda xs: sum(x * x for x in xs)),
    ("max(xs) - min(xs)", lambda xs: max(xs) - min(xs)),
    ("len(set(xs))", lambda xs: len(set(xs))),
]
READ = "n = int(input())\nxs = list(map(int, input().split()))\n"


def _answers(figure: str, rule: Rule) -> list[tuple[str, Callable[[list[int]], int | None]]]:
    """(program, what it prints or None for a crash) for the four answers."""
    return [
        (f"{READ}print({figure})\n", rule),
        (
            f"{READ}print(({figure}) if max(xs) < 50 else 0)\n",
            lambda xs: rule(xs) if max(xs) < 50 else 0,
        ),
        (
            f"{READ}print(({figure}) if len(xs) < 6 else -1)\n",
            lambda xs: rule(xs) if len(xs) < 6 else -1,
        ),
        (
            f"{READ}print(({figure}) // (xs[0] % 3))\n",
            lambda xs: None if xs[0] % 3 == 0 else rule(xs) // (xs[0] % 3),
        ),
    ]


def make_batch(
    problems: int, tests: int
) -> tuple[list[dict[str, Any]], list[tuple[int, str, int]]]:
    """The problems (io-tests rows) and the answers: (problem, program,
    tests it passes by direct count)."""
    rng = random.Random(7)
    rows: list[dict[str, Any]] = []
    answers: list[tuple[int, str, int]] = []
    for p in range(problems):
        figure, rule = FIGURES[p % len(FIGURES)]
        lists = [[rng.randint(1, 99) for _ in range(rng.randint(1, 10))] for _ in range(tests)]
        inputs = [f"{len(xs)}\n{' '.join(map(str, xs))}\n" for xs in lists]
        outputs = [f"{rule(xs)}\n" for xs in lists]
        rows.append(
            {
                "task_id": f"gen/{p}",
                "question": f"Print {figure}.",
                "inputs": inputs,
                "outputs": outputs,
            }
        )
        for program, mirror in _answers(figure, rule):
            passed = sum(mirror(xs) == rule(xs) for xs in lists)
            answers.append((p, program + f"# {p}\n", passed))
    return rows, answers


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1e3, 2)


async def _trainer(
    cfg: aioeval.RunConfig, rows: list[dict[str, Any]], answers: list[tuple[int, str, int]]
) -> dict[str, Any]:
    items = [("io-tests", rows[p], f"```python\n{code}```") for p, code, _ in answers]
    again = [("io-tests", rows[p], f"```python\n{code}# again\n```") for p, code, _ in answers]
    async with Scorer(cfg, queue=len(items)) as scorer:
        t0 = time.perf_counter()
        async with aclosing(scorer.score_many(items, detail=True)) as results:
            got = [r async for r in results]
        wall = time.perf_counter() - t0
        # Latency: fresh texts (nothing cached), as many callers as slots.
        latencies: list[float] = []
        queue = list(again)

        async def caller() -> None:
            while queue:
                bench, problem, text = queue.pop()
                started = time.perf_counter()
                await scorer.score(bench, problem, text, detail=True)
                latencies.append(time.perf_counter() - started)

        async with anyio.create_task_group() as tg:
            for _ in range(scorer.slots):
                tg.start_soon(caller)
    return {"wall_s": wall, "results": got, "latencies": latencies}


def _score(
    rows: list[dict[str, Any]], answers: list[tuple[int, str, int]], workers: int, tmp: Path
) -> tuple[float, dict[tuple[str, int], str]]:
    dataset, samples, out = tmp / "problems.jsonl", tmp / "samples.jsonl", tmp / "out"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = [
        json.dumps({"task_id": rows[p]["task_id"], "completion": code}) for p, code, _ in answers
    ]
    samples.write_text("\n".join(lines) + "\n")
    cmd = [sys.executable, "-m", "aioeval", "score", "--benchmark", "io-tests", "--quiet"]
    cmd += ["--dataset", str(dataset), "--samples", str(samples), "--out", str(out)]
    cmd += [
        "--set",
        f"params.workers={workers}",
        "--set",
        "params.livecodebench.partial_credit=true",
    ]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    found = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return wall, {(r["problem_id"], r["sample_index"]): r["status"] for r in found}


async def measure(workers: int, problems: int = 256, tests: int = 8) -> dict[str, Any]:
    rows, answers = make_batch(problems, tests)
    cfg = aioeval.load_config(overrides=[f"params.workers={workers}"])
    trainer = await _trainer(cfg, rows, answers)
    with tempfile.TemporaryDirectory() as tmp:
        score_wall, score_verdicts = _score(rows, answers, workers, Path(tmp))
    results = trainer["results"]
    seen: dict[int, int] = {}
    same = 0
    differ = 0
    for (p, _, direct), result in zip(answers, results, strict=True):
        index = seen[p] = seen.get(p, -1) + 1
        same += score_verdicts[(rows[p]["task_id"], index)] == result.status
        differ += result.tests_passed != direct
    n = len(answers)
    rate = n / trainer["wall_s"]
    return {
        "answers": n,
        "problems": problems,
        "tests_per_problem": tests,
        "workers": workers,
        "trainer": {
            "answers_per_s": round(rate, 1),
            "answer_ms_p50": _pct(trainer["latencies"], 0.5),
            "answer_ms_p99": _pct(trainer["latencies"], 0.99),
        },
        "score": {"answers_per_s": round(n / score_wall, 1)},
        "ratio": round(rate / (n / score_wall), 2),
        "verdicts_identical": same == n,
        "partial": {
            "tests_passed_reported": sum(r.tests_passed or 0 for r in results),
            "tests_passed_direct": sum(a[2] for a in answers),
            "answers_differing": differ,
        },
        "statuses": {
            s: sum(r.status == s for r in results)
            for s in ("passed", "failed", "timeout", "error", "infra_error")
        },
        "load_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--problems", type=int, default=256)
    parser.add_argument("--tests", type=int, default=8)
    args = parser.parse_args()
    figures = anyio.run(measure, args.workers, args.problems, args.tests)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
