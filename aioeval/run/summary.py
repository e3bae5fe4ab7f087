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
from typing import TYPE_CHECKING, Literal

from aioeval.config import RunConfig
from aioeval.executors.base import ExecutorFacts
from aioeval.metrics import percentile, reportable_ks
from aioeval.run.rundir import RunRecord, now
from aioeval.types import STATUSES, CandidateResult, Dataset, Measurement, Summary

if TYPE_CHECKING:
    from aioeval.run.modes import Plan
    from aioeval.suites.base import Suite

Klass = Literal["deterministic", "environmental"]


class RunStats:
    def __init__(self, benchmark: str) -> None:
        self.benchmark = benchmark
        self.per_problem: dict[str, list[int]] = {}
        self.per_part: dict[str, dict[str, list[int]]] = {}
        """Per named part of the tests (EvalPlus's ``base``): [n, c, 0] per problem."""
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
        self.disagreements = 0
        self.extraction: Counter[str] = Counter()
        """Answers by how their program was taken (results' ``extraction``)."""

    def add(self, r: CandidateResult) -> None:
        self.candidates += 1
        if r.official_status is not None and r.official_status != r.status:
            self.disagreements += 1
        self.counts[r.status] += 1
        if r.extraction is not None:
            self.extraction[r.extraction] += 1
        if r.status == "infra_error":
            self.infra_causes[r.infra_cause or "unknown"] += 1
        else:
            nc = self.per_problem.setdefault(r.problem_id, [0, 0, 0])
            nc[0] += 1
            if r.status == "passed":
                nc[1] += 1
            if r.skipped:
                nc[2] += 1
            self._count_parts(r, 1)
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
        if r.extraction is not None:
            self.extraction[r.extraction] -= 1
        if r.status != "infra_error":
            nc = self.per_problem[r.problem_id]
            nc[0] -= 1
            if r.status == "passed":
                nc[1] -= 1
            if r.skipped:
                nc[2] -= 1
            self._count_parts(r, -1)
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

    def _count_parts(self, r: CandidateResult, sign: int) -> None:
        for part, status in (r.parts or {}).items():
            nc = self.per_part.setdefault(part, {}).setdefault(r.problem_id, [0, 0, 0])
            nc[0] += sign
            if status == "passed":
                nc[1] += sign

    def pass_counts(self) -> dict[str, tuple[int, int]]:
        return {k: (v[0], v[1]) for k, v in self.per_problem.items() if v[0] > 0}

    def measurements(
        self, cfg: RunConfig, suite: Suite, *, comparable: bool = True
    ) -> list[Measurement]:
        """Every measurement of summary.json. pass@k is counted and estimated
        as the suite says, and marked official only when the suite's scoring
        is comparable with published figures and the run is ``comparable``
        (every sample has a verdict, every problem is covered)."""
        b = self.benchmark
        out: list[Measurement] = []
        counts = self.pass_counts()
        scored = suite.pass_counts(self.per_problem)
        pass_official = comparable and suite.comparable

        def add(name: str, value: float, unit: str, klass: Klass, official: bool) -> None:
            out.append(
                Measurement(
                    name=f"{b}.{name}", value=value, unit=unit, klass=klass, official=official
                )
            )

        ks = reportable_ks(counts, requested_ks(cfg, suite))
        figures = [("", scored)]
        for part in suite.figures:
            figures.append((f"{part}.", suite.pass_counts(self.per_part.get(part, {}))))
        for prefix, table in figures:
            for k in ks:
                values = [suite.pass_at_k(n, c, k) for n, c in table.values()]
                add(
                    f"{prefix}pass_at_{k}",
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
            if price.prompt_per_million or price.completion_per_million:  # a price is set
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


def requested_ks(cfg: RunConfig, suite: Suite) -> list[int]:
    return list(cfg.params.k) if cfg.params.k is not None else list(suite.default_k)


def k_notes(stats: RunStats, cfg: RunConfig, suite: Suite) -> list[str]:
    """Which k asked for in ``params.k`` were left out, and why (pass@k needs
    n >= k). The suite's default list is not a request and is not noted."""
    counts = stats.pass_counts()
    if cfg.params.k is None:
        return []
    wanted = requested_ks(cfg, suite)
    kept = set(reportable_ks(counts, wanted))
    dropped = [k for k in wanted if k not in kept]
    if not dropped or not counts:
        return []
    least = min(n for n, _ in counts.values())
    return [
        f"pass@k for k = {', '.join(map(str, dropped))} left out: pass@k needs at least k "
        f"samples per problem and the smallest n here is {least}"
    ]


def coverage_notes(
    dataset: Dataset, stats: RunStats, incomplete: dict[str, int]
) -> tuple[bool, list[str]]:
    """Is pass@k comparable with figures over the whole dataset? And notes
    saying what the run covers when it is not.

    Not comparable: samples missing a verdict (infra errors), problems the
    samples (or ``params.limit``) leave out, problems with no verdict at all.
    """
    notes: list[str] = []
    full = dataset.full_size or dataset.size
    scored = len(stats.pass_counts())
    samples = stats.candidates - sum(incomplete.values())
    if incomplete:
        notes.append(
            f"incomplete: {sum(incomplete.values())} samples have no verdict "
            f"({', '.join(f'{k}: {v}' for k, v in sorted(incomplete.items()))}); "
            f"pass@k is over the {samples} that do and is not official"
        )
    if scored < full:
        notes.append(
            f"coverage: verdicts for {scored} of the dataset's {full} problems "
            f"({samples} samples); pass@k is over those {scored} only and is not official"
        )
    return not notes, notes


FORGEABLE = (
    "scoring=official runs each test inside the candidate's own process, as the "
    "official harness does: a candidate can forge its verdict there; use "
    "scoring=strict (the default) for verdicts a candidate cannot influence"
)


def build_summary(
    suite: Suite,
    cfg: RunConfig,
    plan: Plan,
    record: RunRecord,
    stats: RunStats,
    *,
    isolation: list[str],
    missing: list[str],
    facts: ExecutorFacts,
    saved: int,
    notes: list[str],
    wall_s: float,
) -> Summary:
    """summary.json, from the run's streaming stats and what it ran on."""
    incomplete = dict(stats.infra_causes)
    comparable, coverage = coverage_notes(plan.dataset, stats, incomplete)
    all_notes = [*coverage, *k_notes(stats, cfg, suite)]
    if cfg.params.scoring == "official":
        all_notes.append(FORGEABLE)
    assert record.dataset is not None
    return Summary(
        benchmark=record.benchmark,
        dataset=record.dataset,
        measurements=stats.measurements(cfg, suite, comparable=comparable),
        platform=record.platform,
        complete=not incomplete,
        counts={s: stats.counts.get(s, 0) for s in STATUSES},
        incomplete=incomplete,
        candidates=stats.candidates,
        executions=stats.executions,
        executions_saved=saved,
        scoring=cfg.params.scoring,
        isolation=isolation,
        missing=missing,
        model=cfg.target.model if record.platform == "llm-endpoint" else None,
        started_at=record.resumed_at[-1] if record.resumed_at else record.started_at,
        finished_at=now(),
        wall_s=round(wall_s, 3),
        notes=[*all_notes, *notes],
        executor=facts.executor,
        actors=facts.actors,
        nodes=facts.nodes,
        infra_retries=facts.infra_retries,
        disagreements=stats.disagreements if cfg.params.scoring == "both" else None,
        verifier_isolation=facts.verifier_layers,
        verifier_missing=facts.verifier_missing,
        extraction={k: v for k, v in sorted(stats.extraction.items()) if v},
    )
