"""One CandidateResult builder for the tests that need rows of a run
(reporting, run directories, the HTML report): every field a plain default,
the test overrides what it looks at."""

from __future__ import annotations

from typing import Any

from aioeval.types import CandidateResult


def candidate_result(pid: str, i: int, status: str = "passed", **kw: Any) -> CandidateResult:
    fields: dict[str, Any] = dict(
        problem_id=pid,
        sample_index=i,
        status=status,
        reason="",
        candidate="x",
        raw=None,
        wall_ms=None,
        cpu_ms=None,
        cached=False,
        attempts=1,
        latency_ms=None,
        retry_count=0,
        retry_overhead_ms=0.0,
        prompt_tokens=None,
        completion_tokens=None,
    )
    fields.update(kw)
    return CandidateResult(**fields)
