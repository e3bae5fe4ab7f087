"""The engine held open by a service: `Scorer` (a warm, shared, trusted
scorer) and the HTTP front end of ``aioeval serve`` with its `ServeLimits`."""

from ._limits import ServeLimits
from .scorer import Busy, Scorer, UnknownProblem

__all__ = ["Busy", "Scorer", "ServeLimits", "UnknownProblem"]
