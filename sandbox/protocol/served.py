"""The candidate's CPU under strict scoring: its budget, plus what serving
the verifier's requests costs its process.

Under strict scoring every call between the test and the candidate's code
is a round trip between two processes, and the candidate's child pays for
its half (decoding, encoding, the state both sides compare, the system
calls) where one program pays nothing. That share is the engine's, not the
answer's: the child may spend its budget plus `SERVED_CPU_US` per frame
the verifier wrote to it (a count the trusted verifier keeps), up to
`SERVED_CEILING` times its budget. A candidate cannot buy CPU by asking
more: each request also costs the verifier, whose own budget is the
task's, and the allowance stops at the ceiling.
"""

from __future__ import annotations

SERVED_CPU_US = 120.0
"""CPU a served child is granted per frame the verifier wrote to it: its
half of one crossing with room to spare (`bench/callback_cost.py` measures
it)."""
SERVED_CEILING = 2.0
"""The most a served child may spend, as a multiple of its budget: its hard
CPU limit, and the cap on the allowance."""


def served_cpu_ms(cpu_s: float, crossings: int) -> float:
    """The CPU a served child may use, in milliseconds: its budget plus the
    allowance for ``crossings`` frames, at most the ceiling."""
    budget = cpu_s * 1000.0
    return budget + min(crossings * SERVED_CPU_US / 1000.0, (SERVED_CEILING - 1.0) * budget)


def ceiling_s(cpu_s: float) -> float:
    """A served child's hard CPU limit in seconds (see `SERVED_CEILING`)."""
    return cpu_s * SERVED_CEILING
