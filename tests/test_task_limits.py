"""A task's own CPU budget, and the per-call wall-clock limit a test sets
with the verifier's ``__aioeval_within__``: the machinery suites with
per-problem and per-input limits (EvalPlus, competitive programming) use."""

from __future__ import annotations

import anyio
import pytest

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Checked, Limits, Program

SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}:\n    pass\n"
SLOW_FN = "import time\ndef f(x):\n    time.sleep(x)\n    return x\n"
HARNESS = "def _run(fn, limit, arg):\n    assert __aioeval_within__(limit, fn, arg) == arg\n"


def _run(*tasks: Program | Checked, cpu_s: float = 1.0) -> list[tuple[str, str]]:
    async def go() -> list[tuple[str, str]]:
        async with LocalPool(workers=1, limits=Limits(cpu_s=cpu_s, wall_s=cpu_s * 10)) as pool:
            outs = [await pool.execute(t) for t in tasks]
        return [(o.status, o.reason) for o in outs]

    return anyio.run(go)


def test_a_task_budget_overrides_the_pool_s_both_ways() -> None:
    long, short = (
        Program(program=SPIN.format(s=1.5), cpu_s=4.0),
        Program(program=SPIN.format(s=1.5)),
    )
    (a, b) = _run(long, short, cpu_s=1.0)
    assert a[0] == "passed", a
    assert b[0] == "timeout", b
    (c,) = _run(Program(program=SPIN.format(s=2.5), cpu_s=1.0), cpu_s=6.0)
    assert c[0] == "timeout" and "1s" in c[1], c


def test_a_checked_task_budget_reaches_child_and_verifier() -> None:
    task = Checked(
        program=SPIN.format(s=1.5) + "def f(x):\n    return x\n",
        entry="f",
        setup="",
        driver="assert f(3) == 3",
        cpu_s=4.0,
    )
    ((status, reason),) = _run(task, cpu_s=1.0)
    assert status == "passed", reason


@pytest.mark.parametrize(("sleep", "want"), [(0.0, "passed"), (30.0, "timeout")])
def test_a_call_past_its_limit_is_the_answer_s_timeout(sleep: float, want: str) -> None:
    task = Checked(
        program=SLOW_FN, entry="f", setup=HARNESS, driver=f"_run(f, 0.5, {sleep})", cpu_s=2.0
    )
    ((status, reason),) = _run(task)
    assert status == want, reason
    if want == "timeout":
        assert "time limit of 0.5s" in reason, reason


def test_the_candidate_cannot_rebind_within() -> None:
    program = SLOW_FN + "def __aioeval_within__(limit, fn, arg):\n    return arg\n"
    task = Checked(program=program, entry="f", setup=HARNESS, driver="_run(f, 0.5, 30.0)")
    ((status, reason),) = _run(task, cpu_s=2.0)
    assert status == "timeout", reason
