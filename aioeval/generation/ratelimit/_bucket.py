"""A token bucket that may go into debt (pure: every method takes the time).

One shape serves every limit here: the request pacer, the token budget, and
the fake servers' own limits in tests and benches.
"""

from __future__ import annotations


class Bucket:
    """A token bucket refilled continuously at ``rate`` per second up to
    ``capacity``. Pure: every method takes the time. Its level may go
    negative (debt) when more is taken than it holds."""

    def __init__(
        self, rate: float, capacity: float, now: float, level: float | None = None
    ) -> None:
        if rate <= 0 or capacity <= 0:
            raise ValueError("bucket rate and capacity must be > 0")
        self.rate = rate
        self.capacity = capacity
        self.level = capacity if level is None else min(level, capacity)
        self.updated = now

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
            self.updated = now

    def wait_s(self, amount: float, now: float, held: float = 0.0) -> float:
        """Seconds until ``amount`` can be taken with ``held`` set aside
        (amounts above capacity need a full bucket and leave debt)."""
        self.refill(now)
        need = min(amount, self.capacity) + held
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, amount: float, now: float) -> None:
        self.refill(now)
        self.level -= amount

    def give(self, amount: float, now: float) -> None:
        """Return (or, negative, charge) an amount, never above capacity."""
        self.refill(now)
        self.level = min(self.capacity, self.level + amount)
