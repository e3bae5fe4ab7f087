"""The bucket fit (`ratelimit._fit`): which token buckets explain a run's
admissions and refusals. Answers come from a modelled server replayed by
hand (pure: no clock, no loop), so every bound can be checked against the
bucket that produced it."""

from __future__ import annotations

import math
import random

import pytest

from aioeval.generation.ratelimit._bucket import Bucket
from aioeval.generation.ratelimit._fit import BucketFit, Fits
from aioeval.generation.ratelimit._replay import Event, Hull, Replay


def serve(
    sends: list[tuple[float, int]],
    *,
    rate: float,
    burst: float,
    usage: bool,
    latency: tuple[float, float] = (0.15, 0.45),
    jitter_s: float = 0.0,
    seed: int = 1,
    slows: tuple[float, float] | None = None,
) -> list[tuple[float, str, float, int]]:
    """(send time, answer, answered at, tokens) for each send, from a bucket
    server: one unit per request (``usage`` False) or the request's tokens
    charged when it finishes (``usage``); admitted while the level is at
    least one. Arrivals reach the server up to ``jitter_s`` late; ``slows``
    (time, rate): the refill rate changes then."""
    rng = random.Random(seed)
    bucket = Bucket(rate, burst, 0.0)
    arrivals = sorted((t + rng.uniform(0.0, jitter_s), t, size) for t, size in sends)
    charges: list[tuple[float, int]] = []  # (server time, tokens) still to come
    out = []
    for at, sent, size in arrivals:
        if slows is not None and at >= slows[0] and bucket.rate != slows[1]:
            bucket.refill(slows[0])
            bucket.rate = slows[1]
        for done, tokens in sorted(c for c in charges if c[0] <= at):
            bucket.take(tokens, done)
        charges = [c for c in charges if c[0] > at]
        if bucket.wait_s(1, at) > 0:
            out.append((sent, "refused", at + 0.002, size))
            continue
        if not usage:
            bucket.take(1, at)
        done = at + rng.uniform(*latency)
        if usage:
            charges.append((done, size))
        out.append((sent, "ok", done + 0.001, size))
    return out


def fitted(kind: str, answers: list[tuple[float, str, float, int]]) -> BucketFit:
    fit = BucketFit(kind, 0.0)  # type: ignore[arg-type]
    for sent, answer, at, size in answers:
        fit.arrived(sent, answer)  # type: ignore[arg-type]
        if answer == "ok":
            fit.charged(at, size)
    return fit


def paced(
    rate: float, seconds: float, *, start: float = 0.0, size: int = 1
) -> list[tuple[float, int]]:
    n = int(rate * seconds)
    return [(start + i / rate, size) for i in range(n)]


def test_a_request_bucket_is_pinned_down_by_its_refusals() -> None:
    """4 requests a second, burst 2: a fast start, then paces above and below
    the rate. The region holds the truth and brackets it within 10%."""
    sends = paced(8.0, 0.5) + paced(4.6, 6.0, start=0.5) + paced(3.6, 6.0, start=6.6)
    sends += paced(4.3, 6.0, start=12.7)
    fit = fitted("requests", serve(sends, rate=4.0, burst=2.0, usage=False))
    region = fit.region(0.003)
    assert region is not None
    assert region.lo is not None and region.hi is not None
    assert region.lo <= 4.0 < region.hi
    assert region.hi / region.lo < 1.1
    assert any(s.lo <= 4.0 < s.hi and abs(s.burst - 2.0) < 0.3 for s in region.slices)


def test_usage_debt_is_explained_by_tokens_and_not_by_requests() -> None:
    """1000 tokens a second metered on usage (1 s burst): a start faster than
    the limit puts the server in debt, and requests sent alone are refused
    until it clears. A token bucket explains that; no request bucket does."""
    rng = random.Random(4)
    sends = [(i * 0.08, rng.randint(200, 500)) for i in range(40)]
    sends += [(3.2 + i * 0.4, rng.randint(200, 500)) for i in range(60)]
    answers = serve(sends, rate=1000.0, burst=1000.0, usage=True)
    assert sum(a[1] == "refused" for a in answers) >= 3
    assert fitted("requests", answers).region(0.003) is None
    fit = fitted("usage", answers)
    usage = fit.region(0.003)
    assert usage is not None
    assert (usage.lo or 0.0) <= 1000.0 < (usage.hi or math.inf)
    lo, hi = fit._replay(fit.events, 0.003).bounds(1000.0)
    assert lo <= 1000.0 < hi


@pytest.mark.parametrize("seed", range(5))
def test_late_arrivals_within_the_slack_never_exclude_the_truth(seed: int) -> None:
    """Arrivals up to 5 ms late (a loaded loop): with that slack, the bucket
    that produced the answers stays feasible, for both kinds."""
    rng = random.Random(seed)
    sends = sorted((rng.uniform(0, 20), rng.randint(100, 600)) for _ in range(120))
    for usage in (False, True):
        rate = 1000.0 if usage else 5.0
        burst = 900.0 if usage else 2.0
        answers = serve(sends, rate=rate, burst=burst, usage=usage, jitter_s=0.005, seed=seed)
        if not any(a[1] == "refused" for a in answers):
            continue
        fit = fitted("usage" if usage else "requests", answers)
        replay = fit._replay(fit.events, 0.005)
        lo, hi = replay.bounds(burst)
        assert lo <= rate < hi


def level_at(replay: Replay, rate: float, burst: float, start: float, takes, at: float) -> float:
    """A bucket's level at ``at`` after ``takes`` [(time, units)], in time order."""
    level, t = start, replay.anchor
    for when, units in sorted(takes):
        level = min(burst, level + rate * (when - t)) - units
        t = when
    return min(burst, level + rate * (at - t))


def brute(replay: Replay, rate: float, burst: float, *, admissions: bool) -> bool:
    """What `Replay.bounds` summarises, checked one answer at a time: each
    admission with the takes before it as early as they can be, each
    refusal with them as late as they can be (a request's up to the slack
    after it was sent, but not after the refusal)."""
    times, n = replay.times, len(replay.times)
    if admissions:
        start = burst if replay.start_level is None else 1.0
        for i in range(n):
            if replay.arrival[i] and replay.answer[i] == "ok":
                takes = [(times[j], replay.take_lo[j]) for j in range(i)]
                level = level_at(replay, rate, burst, start, takes, times[i] + replay.slack)
                if level + replay.before[i] < 1:
                    return False
        return True
    start = burst if replay.start_level is None else replay.start_level
    for i in range(n):
        if replay.arrival[i] and replay.answer[i] == "refused":
            takes = [(min(times[j] + replay.late, times[i]), replay.take_hi[j]) for j in range(i)]
            if level_at(replay, rate, burst, start, takes, times[i]) - replay.after[i] >= 1:
                return False
    return True


@pytest.mark.parametrize("seed", range(40))
def test_the_hull_bounds_agree_with_a_replay_event_by_event(seed: int) -> None:
    """lo and hi from the convex-hull scan are exactly where event-by-event
    replays start admitting every admission and stop refusing a refusal."""
    rng = random.Random(seed)
    kind = "requests" if seed % 2 else "usage"
    fit = BucketFit(kind, 0.0)  # type: ignore[arg-type]
    t = 0.0
    for _ in range(rng.randint(5, 50)):
        t += rng.choice([0.0, rng.uniform(0, 0.3)])
        fit.arrived(t, rng.choice(["ok", "ok", "ok", "refused", "failed"]))
        if kind == "usage" and rng.random() < 0.7:
            fit.charged(t + rng.uniform(0, 0.5), rng.randint(50, 600))
    replay = fit._replay(fit.events, rng.choice([1e-6, 0.002, 0.02]))
    least, most = (1e-3, 1e4) if kind == "requests" else (1e-1, 1e8)
    for burst in (1.0, 1.7, 3.0, 40.0, 900.0):
        lo, hi = replay.bounds(burst)
        if least * 1.01 < lo < most / 1.01:
            assert brute(replay, lo * 1.0001, burst, admissions=True)
            assert not brute(replay, lo * 0.9999, burst, admissions=True)
        if least * 1.01 < hi < most / 1.01:
            assert brute(replay, hi * 0.9999, burst, admissions=False)
            assert not brute(replay, hi * 1.0001, burst, admissions=False)


def test_the_hull_finds_the_steepest_line_onto_points_on_its_left() -> None:
    rng = random.Random(2)
    hull = Hull()
    points: list[tuple[float, float]] = []
    x = 0.0
    for _ in range(200):
        x += rng.choice([0.0, rng.uniform(0, 1)])
        y = rng.uniform(-5, 5) + x
        hull.add(x, y)
        points.append((x, y))
        qx, qy = x + rng.uniform(0.01, 2), rng.uniform(-10, 20)
        want = max((qy - py) / (qx - px) for px, py in points)
        assert math.isclose(hull.steepest(qx, qy), want, rel_tol=1e-9, abs_tol=1e-9)


def test_a_bucket_that_changed_is_refitted_from_a_later_refusal() -> None:
    """The server halves its rate at 20 s (a key shared with someone else):
    the fit from the start goes empty, `Fits.read` restarts it at the last
    refusal, and the new rate is bracketed from there on."""
    sends = paced(5.0, 20.0) + paced(3.0, 20.0, start=20.0) + paced(2.3, 30.0, start=40.0)
    answers = serve(sends, rate=4.0, burst=2.0, usage=False, slows=(20.0, 2.0))
    fits = Fits(0.0)
    seen: list[tuple[float, bool]] = []
    for sent, answer, at, _ in answers:
        fits.answered(sent, at, answer, None)  # type: ignore[arg-type]
        if answer == "refused":
            region = fits.read(())[0]
            seen.append((sent, region is not None))
    assert all(ok for t, ok in seen if t < 20.0)  # the first bucket explains the start
    assert any(not ok for t, ok in seen if t >= 20.0)  # until it no longer does
    region = fits.read(())[0]
    assert fits.requests.anchor >= 20.0
    assert region is not None and region.hi is not None
    assert (region.lo or 0.0) <= 2.0 < region.hi < 3.0


def test_a_window_used_up_reads_as_a_bucket_as_deep_as_everything_served() -> None:
    """60 admitted at once, then only refusals for a minute: a bucket
    explains that only by holding nearly all of it (depth near 1), the
    sign that the limiter must not pace by its rate."""
    fit = BucketFit("requests", 0.0)
    for i in range(60):
        fit.arrived(i * 0.04, "ok")
    for i in range(10):
        fit.arrived(2.5 + i * 2.0, "refused")
    region = fit.region(0.003)
    assert region is not None and region.depth > 0.9


def test_sized_picks_the_feasible_bucket_holding_about_a_window_of_its_rate() -> None:
    rng = random.Random(6)
    sends = [(i * 0.08, rng.randint(200, 500)) for i in range(40)]
    sends += [(3.2 + i * 0.35, rng.randint(200, 500)) for i in range(80)]
    answers = serve(sends, rate=1000.0, burst=1000.0, usage=True)
    region = fitted("usage", answers).region(0.003)
    assert region is not None
    rate, burst = region.sized(1.0)
    assert 0.6 * 1000 < rate < 1.5 * 1000
    assert any(s.burst == burst for s in region.slices)


def test_pending_usage_may_have_been_charged_before_a_refusal() -> None:
    """A refusal whose cause (a charge) is still on its way to the client
    is explained by the requests still out."""
    fit = BucketFit("usage", 0.0)
    fit.arrived(0.0, "ok")
    fit.charged(0.3, 400)
    fit.arrived(0.31, "ok")  # charged 900 at the server at 0.6, answer not back
    fit.arrived(0.61, "refused")
    # Without it: at least a unit at 0.31, nothing charged since, under one at 0.61.
    assert fit.region(0.003) is None
    assert fit.region(0.003, pending=[0.31]) is not None


def test_events_sort_by_time_whatever_order_they_are_recorded_in() -> None:
    fit = BucketFit("requests", 0.0)
    fit.arrived(0.5, "ok")
    fit.arrived(0.1, "refused")
    assert [e.at for e in fit.events] == [0.1, 0.5]
    assert isinstance(fit.events[0], Event)


def test_a_whole_number_capacity_narrows_the_rate_to_a_likely_range() -> None:
    """Three refusals at 4 requests a second, burst 2: the feasible
    capacities span less than one whole number, and the rates feasible for
    that one (2) are far narrower than the region's and hold the truth."""
    sends = paced(8.0, 0.5) + paced(4.6, 3.0, start=0.5) + paced(4.3, 3.0, start=3.6)
    fit = fitted("requests", serve(sends, rate=4.0, burst=2.0, usage=False))
    region = fit.region(0.003)
    assert region is not None and region.lo is not None and region.hi is not None
    likely = region.whole()
    assert likely is not None
    lo, hi = likely
    assert lo <= 4.0 < hi
    assert hi - lo < 0.5 * (region.hi - region.lo)


def test_no_likely_range_when_several_whole_capacities_fit() -> None:
    sends = paced(8.0, 0.5)  # one fast start: every capacity up to the burst seen fits
    region = fitted("requests", serve(sends, rate=4.0, burst=2.0, usage=False)).region(0.003)
    assert region is not None
    assert region.slices[-1].burst - region.slices[0].burst >= 1.0
    assert region.whole() is None


def test_a_token_bucket_sized_as_a_second_gives_a_likely_range_that_holds_the_truth() -> None:
    rng = random.Random(4)
    sends = [(i * 0.08, rng.randint(200, 500)) for i in range(40)]
    sends += [(3.2 + i * 0.4, rng.randint(200, 500)) for i in range(60)]
    region = fitted("usage", serve(sends, rate=1000.0, burst=1000.0, usage=True)).region(0.003)
    assert region is not None
    likely = region.windowed((1.0, 60.0))
    assert likely is not None
    assert likely[0] <= 1000.0 <= likely[1] * 1.02
    assert region.windowed((60.0,)) is None  # a minute's bucket would never have refused
