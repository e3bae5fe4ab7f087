"""The template's verdict as a pure function of how the child ended."""

from __future__ import annotations

import os
import signal

import pytest

from aioeval.sandbox.process import harness, verdict
from aioeval.sandbox.protocol import JobHead, Limits

LIMITS = Limits(cpu_s=2.0, wall_s=10.0)
EXITED_0 = 0  # wait status of a normal exit with code 0


def _killed(sig: int) -> int:
    """The wait status of a process killed by `sig`."""
    return sig


def _job(kind: str = "program") -> JobHead:
    return JobHead(id=7, kind=kind, size=0)


def _ending(**fields: object) -> verdict.Ending:
    base: dict[str, object] = {
        "status": EXITED_0,
        "wall_killed": False,
        "too_big": False,
        "wall_ms": 50.0,
        "cpu_ms": 40.0,
    }
    base.update(fields)
    return verdict.Ending(**base)  # type: ignore[arg-type]


def test_status_helpers_match_the_kernel_encoding() -> None:
    assert os.WIFEXITED(EXITED_0) and os.WEXITSTATUS(EXITED_0) == 0
    assert os.WIFSIGNALED(_killed(signal.SIGKILL))
    assert os.WTERMSIG(_killed(signal.SIGKILL)) == signal.SIGKILL


def test_a_reported_pass_is_passed_with_the_childs_times() -> None:
    out = verdict.outcome(_job(), LIMITS, _ending(report=(harness.PASSED, b""), tail_size=12))
    assert (out.id, out.status, out.wall_ms, out.cpu_ms, out.tail_size) == (
        7,
        "passed",
        50.0,
        40.0,
        12,
    )


@pytest.mark.parametrize(
    ("fields", "status", "reason"),
    [
        ({"too_big": True}, "error", "result too large"),
        ({"wall_killed": True, "cpu_ms": 9000.0}, "timeout", "wall-clock backstop"),
        ({"status": _killed(signal.SIGXCPU)}, "timeout", "CPU budget"),
        ({"status": _killed(signal.SIGKILL), "cpu_ms": 1950.0}, "timeout", "CPU budget"),
        ({"status": _killed(signal.SIGKILL)}, "error", "SIGKILL"),
        ({"status": _killed(signal.SIGXFSZ)}, "error", "file size"),
        ({"cpu_ms": 2500.0}, "timeout", "CPU budget"),
    ],
)
def test_a_child_that_ended_badly_is_never_passed(
    fields: dict[str, object], status: str, reason: str
) -> None:
    # It reported a pass first: how it ended still decides.
    out = verdict.outcome(_job(), LIMITS, _ending(report=(harness.PASSED, b""), **fields))
    assert out.status == status and reason in out.reason, out


def test_a_served_childs_word_is_never_a_verdict() -> None:
    out = verdict.outcome(_job("serve"), LIMITS, _ending(report=(harness.PASSED, b"")))
    assert out.status == "exited"
    out = verdict.outcome(_job("serve"), LIMITS, _ending(report=(harness.ERROR, b"bad")))
    assert out.status == "error" and out.reason_size == 3


def test_a_call_returns_its_value_and_a_program_cannot() -> None:
    out = verdict.outcome(_job("call"), LIMITS, _ending(report=(harness.VALUE, b"\x01")))
    assert out.status == "passed" and out.value == b"\x01"
    out = verdict.outcome(_job("program"), LIMITS, _ending(report=(harness.VALUE, b"\x01")))
    assert out.status == "failed" and out.value is None


def test_no_report_is_a_failure_naming_the_exit_code() -> None:
    out = verdict.outcome(_job(), LIMITS, _ending(status=3 << 8))
    assert out.status == "failed" and "status 3" in out.reason


def test_reasons_are_bounded_and_travel_raw() -> None:
    """The child's reason is never decoded in the template: only its size
    (bounded) is in the frame, and its bytes follow raw from a wiped buffer."""
    out = verdict.outcome(_job(), LIMITS, _ending(report=(harness.FAILED, b"x" * 100_000)))
    assert out.status == "failed" and out.reason == ""
    assert out.reason_size == verdict.REASON_BYTES


def test_a_starved_wall_kill_is_an_infra_error_and_a_busy_one_a_timeout() -> None:
    starved = _ending(wall_killed=True, wall_ms=10_000.0, cpu_ms=100.0, run_delay_ms=9_000.0)
    assert verdict.outcome(_job(), LIMITS, starved).status == "infra_error"
    busy = _ending(wall_killed=True, wall_ms=10_000.0, cpu_ms=9_000.0, run_delay_ms=9_000.0)
    assert verdict.outcome(_job(), LIMITS, busy).status == "timeout"


def test_an_oom_kill_is_the_candidates_error_with_both_reasons() -> None:
    out = verdict.outcome(_job(), LIMITS, _ending(status=_killed(signal.SIGKILL), oom_killed=True))
    assert out.status == "error"
    assert out.reason.startswith("memory limit exceeded") and "SIGKILL" in out.reason
