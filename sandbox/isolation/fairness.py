"""Was a candidate that hit the wall-clock backstop starved by the machine?

The verdict-defining timeout is a CPU budget; the wall-clock backstop is
there for candidates that sleep or block. A candidate that wanted to run
but was given no CPU (an overloaded machine, a neighbour the cgroups could
not contain) also reaches the backstop, and that is not its timeout. Two
facts tell the cases apart:

- ``run_delay``: how long the candidate's main process sat runnable on a
  run queue without a CPU (/proc/<pid>/schedstat, read before it is
  reaped). A sleeping or blocked candidate does not wait there.
- the CPU its whole process tree used (the template's RUSAGE_CHILDREN
  delta; every candidate process is reaped by the template, which is init
  of its PID namespace or a child subreaper). A fork-and-spin candidate
  starves its own main process, but its tree burns CPU, so it keeps its
  own `timeout`.

Starved candidates are reported as ``infra_error`` (the pool retries them
once, and a run with any left says it is incomplete), never as a timeout.
The seccomp filter refuses nice, scheduling policies and affinity, so a
candidate cannot lower its own priority to look starved.
"""

from __future__ import annotations

import resource

from . import cgroups

STARVED_DELAY = 0.5
"""The main process waited for a CPU for at least this share of the wall time."""
STARVED_TREE_CPU = 0.25
"""... while the whole tree got at most this share of one CPU."""


class TreeCpu:
    """CPU used by a candidate's whole process tree during one job.

    With a cgroup CPU counter (see `cgroups.SlotCgroups.cpu_usage`) it is
    the slot's usage minus the template's own, which counts processes nobody
    waited for (a candidate that ignores SIGCHLD has its helpers reaped by
    the kernel, and their CPU never reaches anyone's rusage). Without one it
    falls back to what the template reaped.
    """

    def __init__(self, slot: cgroups.SlotCgroups) -> None:
        self.slot = slot
        self.counter0 = cgroups.cpu_usage_ms(slot)
        self.self0 = _self_cpu_ms()
        self.children0 = children_cpu_ms()

    def used_ms(self) -> float:
        counter = cgroups.cpu_usage_ms(self.slot)
        if counter is not None and self.counter0 is not None:
            return max(0.0, (counter - self.counter0) - (_self_cpu_ms() - self.self0))
        return children_cpu_ms() - self.children0


def _self_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000.0


def children_cpu_ms() -> float:
    """User+system CPU of every descendant reaped so far (this process's)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000.0


def run_delay_ms(pid: int) -> float:
    """Time `pid` spent runnable but waiting for a CPU (0 if unknown)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as fh:
            return int(fh.read().split()[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return 0.0


def starved(wall_s: float, wall_ms: float, tree_cpu_ms: float, run_delay_ms: float) -> str | None:
    """For a candidate stopped by the wall-clock backstop: the reason it was
    starved, or None when the timeout is its own (pure)."""
    if wall_ms <= 0:
        return None
    if run_delay_ms < STARVED_DELAY * wall_ms or tree_cpu_ms > STARVED_TREE_CPU * wall_ms:
        return None
    return (
        f"starved: the wall-clock backstop of {wall_s:g}s was reached after only "
        f"{tree_cpu_ms:.0f} ms of CPU while the candidate waited {run_delay_ms:.0f} ms "
        "for a CPU it was not given; not the candidate's timeout"
    )
