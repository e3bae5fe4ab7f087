"""A strict check's child held to its budget plus an allowance for the
frames the verifier wrote to it, and timeouts over many crossings named:
`aioeval.executors._served` and the served-CPU rule of the sandbox's
protocol, as pure functions over real outcomes and check results."""

from __future__ import annotations

import pytest

from aioeval.executors import _served
from aioeval.executors._slot import STRICT_NAMED
from aioeval.sandbox.process import verdict
from aioeval.sandbox.protocol import CheckResult, JobHead, Limits, Outcome
from aioeval.sandbox.protocol.served import SERVED_CEILING, SERVED_CPU_US, served_cpu_ms

LIMITS = Limits(cpu_s=3.0, wall_s=9.0)


def _child(cpu_ms: float, status: str = "exited", reason: str = "") -> Outcome:
    return Outcome(id=1, status=status, reason=reason, wall_ms=cpu_ms * 2, cpu_ms=cpu_ms)


def _check(crossings: int, status: str = "passed", reason: str = "") -> CheckResult:
    return CheckResult(id=1, status=status, reason=reason, crossings=crossings)


def test_the_allowance_grows_with_the_crossings_up_to_the_ceiling() -> None:
    assert served_cpu_ms(3.0, 0) == 3000.0
    assert served_cpu_ms(3.0, 10_000) == pytest.approx(3000.0 + 10_000 * SERVED_CPU_US / 1000)
    assert served_cpu_ms(3.0, 10**9) == 3000.0 * SERVED_CEILING


def test_a_child_within_its_budget_and_allowance_keeps_the_verifiers_verdict() -> None:
    assert _served.over_share(_child(3500.0), _check(20_000), 3.0) is None


def test_a_child_past_its_allowance_times_out_and_names_the_crossings() -> None:
    over = _served.over_share(_child(3500.0), _check(2_000), 3.0)
    assert over is not None and over.status == "timeout"
    assert over.reason.startswith("strict scoring: the check made 2000 calls")
    assert "CPU budget of 3s exceeded" in over.reason


def test_a_child_that_spun_without_crossing_times_out_unnamed() -> None:
    over = _served.over_share(_child(3100.0), _check(3), 3.0)
    assert over is not None and over.reason == "CPU budget of 3s exceeded"


def test_a_childs_timeout_over_many_crossings_says_so_after_what_strict_refused() -> None:
    refused = f"{STRICT_NAMED} follows at most 1024 containers"
    child = _child(3000.0, "timeout", "wall-clock backstop of 9s exceeded")
    out = _served.timed_out(child, _check(5_000, "failed", refused), STRICT_NAMED)
    assert out.status == "timeout"
    assert out.reason.startswith(refused + "; strict scoring: the check made 5000 calls")
    assert out.reason.endswith("(wall-clock backstop of 9s exceeded)")
    few = _served.timed_out(child, _check(10, "failed", "AssertionError"), STRICT_NAMED)
    assert few == child


def test_the_verifiers_own_timeout_over_many_crossings_is_named() -> None:
    check = _check(4_000, "timeout", "the test ran out of its CPU budget of 3s")
    named = _served.judged(check, STRICT_NAMED)
    assert named.reason.startswith("strict scoring: the check made 4000 calls")
    assert _served.judged(_check(4_000, "failed", "AssertionError"), STRICT_NAMED).reason == (
        "AssertionError"
    )


def test_a_served_child_over_its_budget_but_under_its_ceiling_is_left_to_the_engine() -> None:
    ending = verdict.Ending(status=0, wall_killed=False, too_big=False, wall_ms=9.0, cpu_ms=4500.0)
    served = verdict.outcome(JobHead(id=1, kind="serve", size=0), LIMITS, ending)
    assert served.status == "exited" and served.cpu_ms == 4500.0
    program = verdict.outcome(JobHead(id=1, kind="program", size=0), LIMITS, ending)
    assert program.status == "timeout"
    past = verdict.Ending(status=0, wall_killed=False, too_big=False, wall_ms=9.0, cpu_ms=6100.0)
    assert verdict.outcome(JobHead(id=1, kind="serve", size=0), LIMITS, past).status == "timeout"
