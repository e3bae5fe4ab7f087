"""The figures the HTML report draws, built from a run's tally. Pure.

Every figure behind a chart is also shown as numbers in the page, so it
reads without JavaScript.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import msgspec

from aioeval.analysis.runs import Span, Tally
from aioeval.metrics import mean_pass_at_k, percentile

TIMELINE_BUCKETS = 120
HIST_BINS = 40
PCTS = (50.0, 90.0, 95.0, 99.0, 100.0)


def curve_ks(smallest_n: int) -> list[int]:
    """k values for the pass@k curve: every k up to 20, then ~12 per decade."""
    ks = set(range(1, min(smallest_n, 20) + 1))
    k = 20.0
    while k < smallest_n:
        k *= 10 ** (1 / 12)
        ks.add(min(round(k), smallest_n))
    return sorted(ks)


def pass_at_k_curve(counts: dict[str, tuple[int, int]]) -> tuple[list[int], list[float]]:
    if not counts:
        return [], []
    smallest = min(n for n, _ in counts.values())
    ks = curve_ks(smallest)
    return ks, [mean_pass_at_k(counts.values(), k) for k in ks]


def histogram(
    values: Sequence[float], bins: int = HIST_BINS
) -> tuple[list[float], list[int], bool]:
    """Bin centres, counts, and whether the bins are log-spaced (they are
    when the values span more than 20x, so both tails stay visible)."""
    if not values:
        return [], [], False
    lo, hi = min(values), max(values)
    if hi <= lo:
        return [lo], [len(values)], False
    log = lo > 0 and hi / lo > 20
    if log:
        a, b = math.log(lo), math.log(hi)
        edges = [math.exp(a + (b - a) * i / bins) for i in range(bins + 1)]
    else:
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
    counts = [0] * bins
    for v in values:
        counts[min(max(bisect.bisect_right(edges, v) - 1, 0), bins - 1)] += 1
    centres = [
        math.sqrt(edges[i] * edges[i + 1]) if log else (edges[i] + edges[i + 1]) / 2
        for i in range(bins)
    ]
    return centres, counts, log


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    s = sorted(values)
    out = {f"p{q:g}": percentile(s, q) for q in PCTS[:-1]}
    out["max"] = s[-1]
    out["mean"] = math.fsum(s) / len(s)
    return out


class Timeline(msgspec.Struct, frozen=True, kw_only=True):
    """Endpoint traffic per time bucket: HTTP attempts, 429s and retries are
    counted in the bucket of their request's first send (the journal has no
    finer times); open requests are sampled at each bucket's midpoint."""

    t: list[float]
    requests: list[int]
    rate_limited: list[int]
    retries: list[int]
    in_flight: list[int]
    step_s: float


def timeline(spans: Sequence[Span], buckets: int = TIMELINE_BUCKETS) -> Timeline | None:
    """``spans`` are HTTP requests (see `Tally.spans`)."""
    if not spans:
        return None
    t0 = min(s.started for s in spans)
    t1 = max(max(s.finished, s.started) for s in spans)
    step = max((t1 - t0) / buckets, 1e-3)
    nb = max(1, min(buckets, math.ceil((t1 - t0) / step) or 1))
    req, rl, rt = [0] * nb, [0] * nb, [0] * nb
    for s in spans:
        i = min(int((s.started - t0) / step), nb - 1)
        req[i] += s.attempts
        rl[i] += s.rate_limited
        rt[i] += s.retries
    starts = sorted(s.started for s in spans)
    ends = sorted(s.finished for s in spans)
    mids = [t0 + (i + 0.5) * step for i in range(nb)]
    flight = [bisect.bisect_right(starts, m) - bisect.bisect_right(ends, m) for m in mids]
    return Timeline(
        t=[round((m - t0), 3) for m in mids],
        requests=req,
        rate_limited=rl,
        retries=rt,
        in_flight=flight,
        step_s=step,
    )


class Figures(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the charts draw; also embedded as the page's JSON data."""

    passk_k: list[int]
    passk: list[float]
    problem_ids: list[str]
    problem_rates: list[float]
    wall_bins: list[float]
    wall_counts: list[int]
    wall_log: bool
    wall_pct: dict[str, float]
    gen_pct: dict[str, float]
    gen_curve_q: list[float]
    gen_curve_ms: list[float]
    timeline: Timeline | None


def build_figures(t: Tally) -> Figures:
    counts = t.pass_counts()
    ks, curve = pass_at_k_curve(counts)
    ranked = sorted(
        ((p.c / p.n, p.problem_id) for p in t.problems.values() if p.n), key=lambda x: (-x[0], x[1])
    )
    centres, hist, log = histogram(t.wall_ms)
    gen_sorted = sorted(t.gen_latency_ms)
    qs = [float(q) for q in range(101)] if gen_sorted else []
    return Figures(
        passk_k=ks,
        passk=curve,
        problem_ids=[pid for _, pid in ranked],
        problem_rates=[r for r, _ in ranked],
        wall_bins=centres,
        wall_counts=hist,
        wall_log=log,
        wall_pct=percentiles(t.wall_ms),
        gen_pct=percentiles(t.gen_latency_ms),
        gen_curve_q=qs,
        gen_curve_ms=[percentile(gen_sorted, q) for q in qs],
        timeline=timeline(t.spans),
    )
