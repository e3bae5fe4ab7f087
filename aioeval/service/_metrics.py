"""Counters and a latency histogram of ``aioeval serve``, in Prometheus
text format."""

from __future__ import annotations

import bisect

from .scorer import Scorer

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """Counters and a latency histogram, written in Prometheus text format."""

    def __init__(self) -> None:
        self.buckets = [0] * (len(LATENCY_BUCKETS_S) + 1)
        self.latency_sum = 0.0
        self.requests: dict[int, int] = {}

    def observe(self, seconds: float) -> None:
        self.buckets[bisect.bisect_left(LATENCY_BUCKETS_S, seconds)] += 1
        self.latency_sum += seconds

    def text(self, scorer: Scorer, draining: bool, gauges: dict[str, int]) -> str:
        """``gauges``: more ``aioeval_<name>`` gauges (the server's own)."""
        lines = [
            "# TYPE aioeval_queue_depth gauge",
            f"aioeval_queue_depth {scorer.queued}",
            "# TYPE aioeval_in_flight gauge",
            f"aioeval_in_flight {scorer.in_flight}",
            "# TYPE aioeval_slots gauge",
            f"aioeval_slots {scorer.slots}",
            "# TYPE aioeval_draining gauge",
            f"aioeval_draining {int(draining)}",
            "# TYPE aioeval_executions_total counter",
            f"aioeval_executions_total {scorer.executed}",
        ]
        for name, value in gauges.items():
            lines += [f"# TYPE aioeval_{name} gauge", f"aioeval_{name} {value}"]
        lines.append("# TYPE aioeval_verdicts_total counter")
        for status in ("passed", "failed", "timeout", "error", "infra_error"):
            lines.append(f'aioeval_verdicts_total{{status="{status}"}} {scorer.counts[status]}')
        lines.append("# TYPE aioeval_http_responses_total counter")
        for code, n in sorted(self.requests.items()):
            lines.append(f'aioeval_http_responses_total{{code="{code}"}} {n}')
        lines.append("# TYPE aioeval_score_seconds histogram")
        total = 0
        for bound, n in zip((*LATENCY_BUCKETS_S, float("inf")), self.buckets, strict=True):
            total += n
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            lines.append(f'aioeval_score_seconds_bucket{{le="{le}"}} {total}')
        lines.append(f"aioeval_score_seconds_sum {self.latency_sum:.6f}")
        lines.append(f"aioeval_score_seconds_count {total}")
        return "\n".join(lines) + "\n"
