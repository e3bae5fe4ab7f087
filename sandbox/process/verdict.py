"""A job's Outcome from how its child ended: pure logic, no I/O.

The template gathers the facts (`Ending`: wait status, who killed it, times,
the OOM counter, the report the child wrote on its private pipe) and this
module alone decides. How the child ended comes first: a child that was
killed, ran out of time or died is never passed, whatever it wrote before.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

import msgspec

from .. import protocol
from ..isolation import fairness
from ..protocol.served import ceiling_s
from . import harness

REASON_BYTES = 2000
"""A reason is at most a few KB, whatever the child wrote."""


@dataclass(frozen=True)
class Ending:
    """How one child ended, as its template saw it."""

    status: int
    """The wait status from wait4."""
    wall_killed: bool
    """Killed by the wall-clock backstop."""
    too_big: bool
    """Killed for writing more than the result cap."""
    wall_ms: float
    cpu_ms: float
    """The whole tree's CPU (see `fairness.TreeCpu`)."""
    run_delay_ms: float = 0.0
    """Time the child waited for a CPU (read only when wall-killed)."""
    oom_killed: bool = False
    """The slot's memory cgroup OOM-killed one of its processes."""
    report: tuple[bytes, memoryview] | None = None
    """What the child reported on its private pipe (`harness.parse_report`)."""
    tail_size: int = 0
    """Bytes of captured output that follow the Outcome frame."""
    stopped: bool = False
    """A served child killed because the verifier had already decided
    against the answer (a call past its time limit): its verdict stands."""


def outcome(job: protocol.JobHead, limits: protocol.Limits, ending: Ending) -> protocol.Outcome:
    """The job's Outcome, with a starved timeout and an OOM kill said as such."""
    out = _judge(job, limits, ending)
    if out.status == "timeout" and ending.wall_killed:
        # Starved by the machine, not the candidate's timeout: infra_error.
        starved = fairness.starved(
            limits.wall_s, ending.wall_ms, ending.cpu_ms, ending.run_delay_ms
        )
        if starved is not None:
            out = msgspec.structs.replace(out, status="infra_error", reason=starved)
    if ending.oom_killed:
        reason = "memory limit exceeded (all of the candidate's processes together)"
        if out.reason:
            reason += f"; {out.reason}"
        # The child's own words (reason_size) are appended by the engine.
        out = msgspec.structs.replace(out, status="error", reason=reason)
    return out


def _judge(job: protocol.JobHead, limits: protocol.Limits, ending: Ending) -> protocol.Outcome:
    def out(
        kind: str, reason: str = "", value: bytes | None = None, reason_size: int = 0
    ) -> protocol.Outcome:
        return protocol.Outcome(
            id=job.id,
            status=kind,
            reason=reason,
            reason_size=reason_size,
            value=value,
            wall_ms=ending.wall_ms,
            cpu_ms=ending.cpu_ms,
            tail_size=ending.tail_size,
        )

    ended_badly = _how_it_ended(limits, ending, job.kind == "serve")
    if ending.stopped and job.kind == "serve" and _only_stopped(ending, ended_badly):
        return out("exited", "stopped: the test had already decided")
    if ended_badly is not None:
        return out(*ended_badly)
    if ending.report is not None:
        kind, payload = ending.report
        # The reason is the child's text: it travels as raw bytes after the
        # frame, straight from the template's wiped buffer (`reason_size`).
        text = min(len(payload), REASON_BYTES)
        if kind == harness.SETUP:
            return out("infra_error", reason_size=text)
        if kind == harness.ERROR:
            return out("error", reason_size=text)
        if job.kind == "serve":
            pass  # a served child's word is never a verdict
        elif kind == harness.PASSED and job.kind == "program":
            return out("passed")
        elif kind == harness.VALUE and job.kind == "call":
            return out("passed", value=bytes(payload))
        elif kind == harness.FAILED:
            return out("failed", reason_size=text)
    if job.kind == "serve":
        return out("exited")
    status = ending.status
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return out("failed", f"exited with status {code} before the check completed")


def _only_stopped(ending: Ending, ended_badly: tuple[str, str] | None) -> bool:
    """Was the template's kill (the verifier had decided) the only thing
    that ended this child? Not if it ran out of its budget, died of a
    signal of its own, or could not be set up."""
    if ending.report is not None and ending.report[0] == harness.SETUP:
        return False
    if ended_badly is None:
        return True
    killed = os.WIFSIGNALED(ending.status) and os.WTERMSIG(ending.status) == signal.SIGKILL
    return killed and ended_badly[0] != "timeout"


def _how_it_ended(limits: protocol.Limits, ending: Ending, served: bool) -> tuple[str, str] | None:
    """The verdict and reason when the child was killed, timed out or died;
    None when it ended on its own within its budget (a served child's, up to
    its ceiling: the engine holds it to its share, `protocol.served`)."""
    if ending.too_big:
        return "error", "result too large"
    if ending.wall_killed:
        return "timeout", f"wall-clock backstop of {limits.wall_s:g}s exceeded"
    budget_ms = (ceiling_s(limits.cpu_s) if served else limits.cpu_s) * 1000.0
    if os.WIFSIGNALED(ending.status):
        sig = os.WTERMSIG(ending.status)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and ending.cpu_ms >= budget_ms * 0.95):
            return "timeout", f"CPU budget of {limits.cpu_s:g}s exceeded"
        if sig == signal.SIGXFSZ:
            return "error", "file size limit exceeded (output or file too large)"
        return "error", f"killed by signal {signal.Signals(sig).name}"
    if ending.cpu_ms > budget_ms:
        # RLIMIT_CPU counts whole seconds per process and can be ignored
        # until the hard limit; the budget is the exact total of the
        # child and the descendants it waited for.
        return "timeout", f"CPU budget of {limits.cpu_s:g}s exceeded"
    return None
