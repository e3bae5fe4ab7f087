"""In a served child: raise its soft CPU limit as it serves the verifier.

The template gives a served child its budget as the soft CPU limit and a
ceiling as the hard one (`protocol.served`). Without more, an honest
answer whose test calls across thousands of times would get SIGXCPU at its
budget for CPU the serving code spent. So the child raises its own soft
limit by `served.SERVED_CPU_US` for each frame it writes, up to the hard
limit. The count is the child's own and proves nothing: a candidate can
raise its soft limit to the hard one itself. The engine judges the child's
CPU against the verifier's count of frames (`served.served_cpu_ms`).
"""

from __future__ import annotations

import math
import resource

from ..protocol import served

_getrlimit = resource.getrlimit
_setrlimit = resource.setrlimit
_RLIMIT_CPU = resource.RLIMIT_CPU
_ceil = math.ceil
STEP = 256
"""Frames between two raises: one system call per `STEP` crossings."""


class Allowance:
    """The child's soft CPU limit, kept at its budget plus its frames' share."""

    def __init__(self) -> None:
        self.base, self.hard = _getrlimit(_RLIMIT_CPU)
        self.soft = self.base

    def grant(self, frames: int) -> None:
        """Raise the soft limit for ``frames`` frames written so far."""
        if self.hard <= self.soft:  # no ceiling above (or unlimited)
            return
        want = min(self.hard, self.base + _ceil(frames * served.SERVED_CPU_US / 1e6))
        if want > self.soft:
            try:
                _setrlimit(_RLIMIT_CPU, (want, self.hard))
            except (OSError, ValueError):
                return  # the candidate changed its own limits: the engine judges
            self.soft = want
