"""Starved or slow: a wall-clock kill of a candidate that was given no CPU is
an infra_error (retried), never that candidate's timeout."""

from __future__ import annotations

import os
import textwrap

import pytest
from hostcheck import assert_nothing_left

from aioeval.executors.local import LocalPool
from aioeval.sandbox.isolation import fairness
from aioeval.sandbox.protocol import Limits

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("wall_ms", "tree_cpu_ms", "run_delay_ms", "starved"),
    [
        (9000, 254, 8700, True),  # the case: runnable, given almost nothing
        (9000, 9000, 8800, False),  # starved by its own 60 spinning children
        (9000, 4, 2, False),  # asleep or blocked: its own timeout
        (9000, 3000, 4600, False),  # a busy machine, but it got a third of a CPU
        (9000, 2000, 4000, False),  # waited less than half of the time
        (9000, 2250, 4500, True),  # both thresholds, inclusive
        (0, 0, 0, False),
    ],
)
def test_starved_decision(
    wall_ms: float, tree_cpu_ms: float, run_delay_ms: float, starved: bool
) -> None:
    reason = fairness.starved(9.0, wall_ms, tree_cpu_ms, run_delay_ms)
    assert (reason is not None) == starved
    if reason is not None:
        assert reason.startswith("starved:") and "9s" in reason


def test_run_delay_of_an_unknown_process_is_zero() -> None:
    assert fairness.run_delay_ms(2**22 + 7) == 0.0
    assert fairness.run_delay_ms(os.getpid()) >= 0.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


SPIN_01 = """
import time
t = time.process_time()
while time.process_time() - t < 0.1:
    pass
"""


@pytest.mark.slow
async def test_a_starved_candidate_is_not_timed_out() -> None:
    # The machine gives the slot almost no CPU: here by throttling the slot's
    # own cpu cgroup to 1% of a CPU from outside, which a loaded host does by
    # contention. The run queue wait is the same either way.
    # A backstop the unthrottled candidate (0.1 s of CPU) reaches only on a
    # machine that gives the slot under 5% of a CPU.
    limits = Limits(cpu_s=2.0, wall_s=2.0, memory_mb=512, fsize_mb=8, disk_mb=32)
    async with LocalPool(workers=1, limits=limits) as pool:
        ready = pool._slots[0].ready
        assert ready is not None
        cpu = [p for p in ready.cgroups if os.path.exists(os.path.join(p, "cpu.cfs_quota_us"))]
        if "cgroup-cpu" not in pool.layers or not cpu:
            pytest.skip("needs a v1 cpu cgroup with CFS bandwidth control")
        quota = os.path.join(cpu[0], "cpu.cfs_quota_us")
        with open(quota, "w") as fh:
            fh.write("1000")
        try:
            out = await pool.run(textwrap.dedent(SPIN_01))
        finally:
            with open(quota, "w") as fh:
                fh.write("100000")
        assert out.status == "infra_error" and out.reason.startswith("starved:"), out
        assert pool.infra_retries == 1  # retried once, starved again
        # Given its CPU back, the same candidate passes on the same slot; one
        # that sleeps into the backstop is still a plain timeout.
        out = await pool.run(textwrap.dedent(SPIN_01))
        assert out.status == "passed", out
        out = await pool.run("import time\ntime.sleep(30)")
        assert out.status == "timeout" and "wall-clock" in out.reason, out
        assert_nothing_left(pool)
