"""The engine held open by a service: `Scorer` (a warm, shared, trusted
scorer) and the HTTP front end of ``aioeval serve``."""

from .scorer import Busy, Scorer, UnknownProblem

__all__ = ["Busy", "Scorer", "UnknownProblem"]
