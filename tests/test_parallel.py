"""Parallel caps learned from 429s (pure)."""

from __future__ import annotations

from aioeval.generation.ratehints import Budget, RateHeaders
from aioeval.generation.ratelimit._parallel import ParallelCap


def test_parallel_slow_start_then_a_cap_learned_from_one_429() -> None:
    cap = ParallelCap(16, slow_start=True)
    assert cap.allowed == 1
    for parallel in (1, 2, 3, 4):
        cap.on_success(parallel)
    assert cap.allowed == 5
    wait = RateHeaders(retry_after_s=60.0)
    assert not cap.is_parallel_429(1, 0, wait)  # nothing else in flight: a rate limit
    assert not cap.is_parallel_429(3, 0, wait)  # 4 in flight worked before
    # A tie is a cap: the client counts a request until its answer is read,
    # so "4 worked" may have been 3 at the server.
    assert cap.is_parallel_429(4, 0, wait)
    assert not cap.is_parallel_429(5, 6, wait)  # a request sent at 6 is running: admitted
    exhausted = RateHeaders(requests=(Budget(remaining=0),))
    assert not cap.is_parallel_429(5, 0, exhausted)  # the server says: request budget
    assert cap.is_parallel_429(5, 4, wait)
    # A bare 429 is a rate limit whatever is in flight: at low parallelism a
    # bucket's refusal looks just like a cap.
    assert not cap.is_parallel_429(9, 0, RateHeaders())
    cap.on_parallel_429(5, 1.0, 1.0, paced=True)
    assert cap.allowed == 4 and cap.cap == 4 and not cap.slow_start


def test_parallel_probes_rarely_once_confirmed() -> None:
    cap = ParallelCap(16, slow_start=True)
    for parallel in (1, 2, 3, 4):
        cap.on_success(parallel)
    cap.on_parallel_429(5, 2.0, 2.0, paced=True)
    quick = cap.probe_after
    for _ in range(quick):
        cap.on_success(4)
    assert cap.allowed == 5  # an unconfirmed cap is tested again soon
    cap.on_parallel_429(5, 3.0, 3.0, paced=True)  # refused again: confirmed
    assert cap.allowed == 4 and cap.probe_after > 10 * quick
    for _ in range(cap.probe_after - 1):
        cap.on_success(4)
    assert cap.allowed == 4
    cap.on_success(3)  # not at the cap: not evidence the cap could be higher
    assert cap.allowed == 4


def test_a_rate_429_after_a_single_parallel_refusal_undoes_the_cap() -> None:
    cap = ParallelCap(16, slow_start=True)
    for parallel in (1, 2):
        cap.on_success(parallel)
    cap.on_parallel_429(3, 4.0, 4.0, paced=False)
    assert cap.allowed == 2
    cap.on_rate_429(paced=False)  # no pace yet: back to where it was
    assert cap.allowed == 3 and cap.cap is None


def test_once_paced_the_parallel_limit_is_max_concurrency_unless_a_cap_is_known() -> None:
    """The pace holds the rate from then on; only a parallel cap holds
    requests in flight below max_concurrency."""
    free = ParallelCap(16, slow_start=True)
    free.on_rate_429(paced=True)
    assert free.allowed == 16 and not free.slow_start
    capped = ParallelCap(16, slow_start=True)
    for parallel in (1, 2, 3):
        capped.on_success(parallel)
    capped.on_parallel_429(4, 1.0, 1.0, paced=True)
    capped.on_parallel_429(4, 2.0, 2.0, paced=True)  # confirmed
    capped.on_rate_429(paced=True)
    assert capped.allowed == 3


def test_a_rate_429_voids_a_cap_found_unpaced_but_not_one_found_under_a_pace() -> None:
    unpaced = ParallelCap(16, slow_start=True)
    for parallel in (1, 2, 3):
        unpaced.on_success(parallel)
    unpaced.on_parallel_429(4, 5.0, 5.0, paced=False)
    unpaced.on_parallel_429(4, 6.0, 6.0, paced=False)  # a burst refused twice looks confirmed
    unpaced.on_rate_429(paced=True)
    assert unpaced.cap is None and unpaced.allowed == 16
    paced = ParallelCap(16, slow_start=True)
    for parallel in (1, 2, 3):
        paced.on_success(parallel)
    paced.on_parallel_429(4, 7.0, 7.0, paced=True)
    paced.on_parallel_429(4, 8.0, 8.0, paced=True)
    paced.on_rate_429(paced=True)
    assert paced.cap == 3 and paced.allowed == 3


def test_slow_start_doubles_what_was_admitted() -> None:
    cap = ParallelCap(16, slow_start=True)
    cap.on_admitted(0)
    assert cap.allowed == 1
    cap.on_admitted(3)
    assert cap.allowed == 6
    cap.on_admitted(12)
    assert cap.allowed == 16  # never above max_concurrency


def test_a_burst_refused_together_is_one_refusal() -> None:
    cap = ParallelCap(16, slow_start=True)
    for parallel in (1, 2, 3, 4):
        cap.on_success(parallel)
    # 5, 6, 7, 8 went out at t=1 together; their 429s come back one by one
    cap.on_parallel_429(5, 1.0, 1.01, paced=False)
    for parallel in (6, 7, 8):
        cap.on_parallel_429(parallel, 1.0, 1.02, paced=False)
    assert cap.allowed == 4 and cap.cap == 4
    assert cap.refusals == 1  # not confirmed: probed again soon
