"""Streaming run statistics and the measurements of summary.json.

Only counts are kept per problem (n scored, c passed), so memory does not
grow with the number of samples. Measurement names are a public contract:
``<benchmark>.pass_at_<k>``, ``.avg_latency_ms`` (mean sandbox wall time per
executed candidate), ``.total_tokens``, ``.cost_usd``, ``.retry_count``,
``.retry_overhead_ms``, ``.rate_limited_count`` (429 answers seen by
generation), and generation latency percentiles under their own names
(``.generation_latency_p50_ms`` ...).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Literal

from .config import RunConfig
from .metrics import pass_at_k, percentile, reportable_ks
from .types import CandidateResult, Measurement

Klass = Literal["deterministic", "environmental"]


class RunStats:
    def __init__(self, benchmark: str) -> None:
        self.benchmark = benchmark
        self.per_problem: dict[str, list[int]] = {}
        self.counts: Counter[str] = Counter()
        self.infra_causes: Counter[str] = Counter()
        self.wall_sum = 0.0
        self.executions = 0
        self.cached = 0
        self.gen_latencies: list[float] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.usage_seen = False
        self.retry_count = 0
        self.retry_overhead_ms = 0.0
        self.rate_limited = 0
        self.candidates = 0

    def add(self, r: CandidateResult) -> None:
        self.candidates += 1
        self.counts[r.status] += 1
        if r.status == "infra_error":
            self.infra_causes[r.infra_cause or "unknown"] += 1
        else:
            nc = self.per_problem.setdefault(r.problem_id, [0, 0, 0])
            nc[0] += 1
            if r.status == "passed":
                nc[1] += 1
            if r.skipped:
                nc[2] += 1
        if r.cached:
            self.cached += 1
        elif r.wall_ms is not None:
            self.executions += 1
            self.wall_sum += r.wall_ms
        if r.latency_ms is not None:
            self.gen_latencies.append(r.latency_ms)
        if r.prompt_tokens is not None or r.completion_tokens is not None:
            self.usage_seen = True
            self.prompt_tokens += r.prompt_tokens or 0
            self.completion_tokens += r.completion_tokens or 0
        self.retry_count += r.retry_count
        self.retry_overhead_ms += r.retry_overhead_ms
        self.rate_limited += r.rate_limited

    def carry(self, r: CandidateResult) -> None:
        """Count only what generation spent on a verdict that was superseded
        (a resume tried its sample again), so totals survive resumes."""
        if r.prompt_tokens is not None or r.completion_tokens is not None:
            self.usage_seen = True
            self.prompt_tokens += r.prompt_tokens or 0
            self.completion_tokens += r.completion_tokens or 0
        self.retry_count += r.retry_count
        self.retry_overhead_ms += r.retry_overhead_ms
        self.rate_limited += r.rate_limited

    def remove(self, r: CandidateResult) -> None:
        """Undo ``add`` for a verdict that is being replaced (timeout re-check)."""
        self.candidates -= 1
        self.counts[r.status] -= 1
        if r.status != "infra_error":
            nc = self.per_problem[r.problem_id]
            nc[0] -= 1
            if r.status == "passed":
                nc[1] -= 1
            if r.skipped:
                nc[2] -= 1
        if not r.cached and r.wall_ms is not None:
            self.executions -= 1
            self.wall_sum -= r.wall_ms
        # Generation accounting too: the replacement carries the same
        # generation, so keeping both would count its tokens and retries twice.
        if r.latency_ms is not None and r.latency_ms in self.gen_latencies:
            self.gen_latencies.remove(r.latency_ms)
        self.prompt_tokens -= r.prompt_tokens or 0
        self.completion_tokens -= r.completion_tokens or 0
        self.retry_count -= r.retry_count
        self.retry_overhead_ms -= r.retry_overhead_ms
        self.rate_limited -= r.rate_limited

    def pass_counts(self) -> dict[str, tuple[int, int]]:
        return {k: (v[0], v[1]) for k, v in self.per_problem.items() if v[0] > 0}

    def official_crux_counts(self) -> dict[str, tuple[int, int]]:
        """(n, c) per problem under the upstream CRUXEval evaluator's rule:
        a problem where nothing executed passed keeps every generation
        (n = all, c = 0); otherwise skipped generations drop out of n."""
        return {
            k: (v[0], 0) if v[1] == 0 else (v[0] - v[2], v[1])
            for k, v in self.per_problem.items()
            if v[0] > 0
        }

    def measurements(self, cfg: RunConfig) -> list[Measurement]:
        b = self.benchmark
        out: list[Measurement] = []
        counts = self.pass_counts()
        crux_official = b.startswith("cruxeval") and cfg.params.scoring == "official"
        # Strict CRUXEval scoring is stricter than the upstream evaluator, so
        # its pass@k is not comparable with published (official) figures.
        pass_official = crux_official or not b.startswith("cruxeval")
        scored = self.official_crux_counts() if crux_official else counts
        estimate = _upstream_pass_at_k if crux_official else pass_at_k

        def add(name: str, value: float, unit: str, klass: Klass, official: bool) -> None:
            out.append(
                Measurement(
                    name=f"{b}.{name}", value=value, unit=unit, klass=klass, official=official
                )
            )

        for k in reportable_ks(counts, cfg.params.k):
            values = [estimate(n, c, k) for n, c in scored.values()]
            add(
                f"pass_at_{k}",
                math.fsum(values) / len(values) if values else 0.0,
                "fraction",
                "deterministic",
                pass_official,
            )
        if self.executions:
            add("avg_latency_ms", self.wall_sum / self.executions, "ms", "environmental", False)
        if self.usage_seen:
            total = self.prompt_tokens + self.completion_tokens
            add("total_tokens", float(total), "tokens", "deterministic", False)
            price = cfg.target.price
            cost = (
                self.prompt_tokens * price.prompt_per_million
                + self.completion_tokens * price.completion_per_million
            ) / 1e6
            add("cost_usd", cost, "USD", "deterministic", False)
        if cfg.params.retry is not None:
            add("retry_count", float(self.retry_count), "count", "environmental", False)
            add("retry_overhead_ms", self.retry_overhead_ms, "ms", "environmental", False)
        if self.gen_latencies or self.rate_limited:
            add("rate_limited_count", float(self.rate_limited), "count", "environmental", False)
        if self.gen_latencies:
            lat = sorted(self.gen_latencies)
            for q in (50, 90, 99):
                add(f"generation_latency_p{q}_ms", percentile(lat, q), "ms", "environmental", False)
        return out


def _upstream_pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k as the upstream CRUXEval evaluator computes it: 1.0 whenever
    n - c < k, which also covers an official list shrunk below k."""
    if n - c < k:
        return 1.0
    return pass_at_k(n, c, k)
