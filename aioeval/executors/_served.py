"""A strict check's child judged with what serving the verifier cost it.

The verifier counts the frames it wrote to the candidate's child
(`CheckResult.crossings`); the child may spend its CPU budget plus an
allowance for them (`protocol.served`). This module holds it to that share
and says, when time ran out over many crossings, that strict scoring's
round trips were part of it.
"""

from __future__ import annotations

import msgspec

from aioeval.sandbox.protocol import CheckResult, Outcome
from aioeval.sandbox.protocol.served import served_cpu_ms

MANY_CROSSINGS = 1000
"""From this many frames a timeout names the calls between the processes:
their round trips then cost the answer a share of its time that one
program does not pay."""


def crossings_named(crossings: int) -> str:
    """What a timeout over ``crossings`` frames says strict scoring spent."""
    return (
        f"strict scoring: the check made {crossings} calls between the processes "
        "(the test's and the candidate's), each a round trip that one program does not pay"
    )


def timed_out(child: Outcome, check: CheckResult, strict_named: str) -> Outcome:
    """A child that timed out, with what strict could not follow (the
    verifier's named reason) and the calls between the processes in front
    of its own reason."""
    named = [check.reason] if check.reason.startswith(strict_named) else []
    if check.crossings >= MANY_CROSSINGS:
        named.append(crossings_named(check.crossings))
    if not named:
        return child
    return msgspec.structs.replace(child, reason=f"{'; '.join(named)} ({child.reason})")


def over_share(child: Outcome, check: CheckResult, cpu_s: float) -> Outcome | None:
    """The child's timeout when it spent more CPU than its budget and its
    allowance for the frames the verifier wrote to it; None within them."""
    if child.cpu_ms <= served_cpu_ms(cpu_s, check.crossings):
        return None
    reason = f"CPU budget of {cpu_s:g}s exceeded"
    if check.crossings >= MANY_CROSSINGS:
        reason = f"{crossings_named(check.crossings)} ({reason})"
    return msgspec.structs.replace(child, status="timeout", reason=reason)


def judged(check: CheckResult, strict_named: str) -> CheckResult:
    """The verifier's result, its own timeout over many crossings named as
    strict scoring's."""
    if check.status != "timeout" or check.reason.startswith(strict_named):
        return check
    if check.crossings < MANY_CROSSINGS:
        return check
    reason = f"{crossings_named(check.crossings)} ({check.reason})"
    return msgspec.structs.replace(check, reason=reason)
