"""What one call of the candidate costs under strict scoring, over official.

A test calls the candidate ``--calls`` times (a small int function, the
shape of HumanEval+-style tests with hundreds of inputs) and the same check
runs with one call; the difference over the extra calls is the per-call
cost. Both scoring models run through one real pool in the same process:
strict (the test in the verifier, each call a round trip to the candidate's
child) and official (test and candidate in one process). A third case is
strict scoring's data tests: the same inputs sent at once and the answers
read as they come (``__aioeval_map__``, as the EvalPlus and LiveCodeBench
harnesses do). Each case is the median of ``--repeat`` runs.

Prints one JSON line: per-call microseconds in each model and their
difference (strict over official), and per input when streamed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import anyio
import orjson

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Checked, Limits, Program

PROGRAM = "def f(x):\n    return x * 2 + 1\n"
TEST = "def check(candidate):\n    for i in range({n}):\n        assert candidate(i) == 2 * i + 1\n"
STREAMED = (
    "def check(candidate):\n    answers = __aioeval_map__(candidate, [(i,) for i in range({n})])\n"
    "    for i in range({n}):\n        assert next(answers) == 2 * i + 1\n"
)


async def _median(pool: LocalPool, task: Checked | Program, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = await pool.execute(task)
        times.append(time.perf_counter() - start)
        if out.status != "passed":
            sys.exit(f"call_cost: the check did not pass: {out.status} {out.reason}")
    return statistics.median(times)


def _tasks(n: int) -> tuple[Checked, Program, Checked]:
    test = TEST.format(n=n)
    strict = Checked(program=PROGRAM, entry="f", setup=test, driver="check(f)")
    official = Program(program=PROGRAM + test + "check(f)\n")
    streamed = Checked(program=PROGRAM, entry="f", setup=STREAMED.format(n=n), driver="check(f)")
    return strict, official, streamed


async def main(calls: int, repeat: int) -> dict[str, object]:
    limits = Limits(cpu_s=20.0, wall_s=60.0)
    async with LocalPool(workers=1, limits=limits) as pool:
        one_s, one_o, one_m = _tasks(1)
        many_s, many_o, many_m = _tasks(calls)
        await _median(pool, one_s, 3)  # start the verifier, warm both paths
        base_s = await _median(pool, one_s, repeat)
        base_o = await _median(pool, one_o, repeat)
        base_m = await _median(pool, one_m, repeat)
        full_s = await _median(pool, many_s, repeat)
        full_o = await _median(pool, many_o, repeat)
        full_m = await _median(pool, many_m, repeat)
    per_s = (full_s - base_s) / (calls - 1) * 1e6
    per_o = (full_o - base_o) / (calls - 1) * 1e6
    per_m = (full_m - base_m) / (calls - 1) * 1e6
    return {
        "bench": "call_cost",
        "calls": calls,
        "strict_us_per_call": round(per_s, 1),
        "official_us_per_call": round(per_o, 2),
        "strict_over_official_us": round(per_s - per_o, 1),
        "streamed_us_per_input": round(per_m, 1),
        "streamed_over_official_us": round(per_m - per_o, 1),
        "strict_check_ms": round(full_s * 1e3, 1),
        "official_check_ms": round(full_o * 1e3, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(orjson.dumps(anyio.run(main, args.calls, args.repeat)).decode())
