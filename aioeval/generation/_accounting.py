"""Request accounting: one request's numbers split across its samples.

With ``n`` samples per request, additive quantities (prompt and completion
tokens, retries, retry overhead, 429s) are split so that run totals count
each exactly once: prompt tokens, retries and 429s evenly (remainder to the
lowest sample indices), completion tokens in proportion to each choice's
length, retry overhead evenly. Attempts, latency, timestamps and each
choice's own finish reason are per sample. Pure.
"""

from __future__ import annotations

from aioeval.types import Generation

from .client import Completion
from .retry import Attempted


def split_evenly(total: int, k: int) -> list[int]:
    base, rem = divmod(total, k)
    return [base + 1] * rem + [base] * (k - rem)


def split_by_weight(total: int, weights: list[int]) -> list[int]:
    """Integer shares proportional to ``weights`` that sum to ``total``
    (largest remainder; ties go to the earlier index)."""
    w = [max(x, 1) for x in weights]
    s = sum(w)
    exact = [total * x / s for x in w]
    shares = [int(e) for e in exact]
    order = sorted(range(len(w)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in order[: total - sum(shares)]:
        shares[i] += 1
    return shares


def sample_generations(
    result: Attempted[Completion], texts: list[str], started_at: float, finished_at: float
) -> list[Generation]:
    """Per-sample accounting for one request's samples (see module docstring)."""
    k = len(texts)
    comp = result.value
    usage = comp.usage if comp is not None else None
    prompt = (
        split_evenly(usage.prompt_tokens, k)
        if usage is not None and usage.prompt_tokens is not None
        else [None] * k
    )
    completion = (
        split_by_weight(usage.completion_tokens, [len(t) for t in texts])
        if usage is not None and usage.completion_tokens is not None
        else [None] * k
    )
    retries = split_evenly(max(0, result.attempts - 1), k)
    limited = split_evenly(result.rate_limited, k)
    overhead = result.retry_overhead_s * 1000.0 / k
    return [
        Generation(
            attempts=result.attempts,
            latency_ms=comp.latency_ms if comp is not None else None,
            retry_count=retries[i],
            retry_overhead_ms=overhead,
            prompt_tokens=prompt[i],
            completion_tokens=completion[i],
            finish_reason=comp.choices[i].finish_reason if comp is not None else None,
            started_at=started_at,
            finished_at=finished_at,
            rate_limited=limited[i],
        )
        for i in range(k)
    ]
