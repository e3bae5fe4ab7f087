"""Reading a run back: summary.json, run.json and results.jsonl.

A run directory is what ``aioeval run|score --out DIR`` wrote. A folder whose
subfolders are run directories (one per benchmark, e.g. ``model-x/human-eval``
and ``model-x/cruxeval-o``) is read as a set of runs keyed by benchmark, so
`compare` can pair them benchmark by benchmark.

A run that has no summary.json yet (interrupted, or still running) is read
by `aioeval.analysis.partial`, for ``aioeval report``.

Every failure is an `InputError` whose one-line message names the file (and
line); results.jsonl is streamed line by line, never read whole. `tally`
folds the results into what the report and the comparison need; it is pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from aioeval.config import Params
from aioeval.errors import InputError
from aioeval.run.journal import read_results
from aioeval.run.rundir import RESULTS, RUN, SUMMARY, RunRecord, read_json
from aioeval.run.summary import RunStats
from aioeval.suites import get_suite
from aioeval.types import CandidateResult, Summary


def natural_key(text: str) -> str:
    """Sort key that puts HumanEval/9 before HumanEval/10."""
    return re.sub(r"\d+", lambda m: m.group().zfill(12), text)


class RunDir(msgspec.Struct, frozen=True, kw_only=True):
    path: Path
    summary: Summary
    info: RunRecord | None
    partial: bool = False
    """No summary.json yet: ``summary`` was worked out from the journal."""

    @property
    def benchmark(self) -> str:
        return self.summary.benchmark

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS


def load_run(path: Path | str) -> RunDir:
    """One run directory; its summary.json is required, run.json optional
    (`aioeval.analysis.partial` reads a run that has no summary yet)."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{path}: no such run directory")
    summary = read_json(path / SUMMARY, Summary, f"{path / SUMMARY}: missing (did the run finish?)")
    info: RunRecord | None = None
    if (path / RUN).exists():
        info = read_json(path / RUN, RunRecord, f"{path / RUN}: missing (did the run finish?)")
    if not (path / RESULTS).is_file():
        raise InputError(f"{path / RESULTS}: missing")
    return RunDir(path=path, summary=summary, info=info)


def load_runs(path: Path | str) -> dict[str, RunDir]:
    """A run directory, or a folder of run directories, keyed by benchmark."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{path}: no such run directory")
    if (path / SUMMARY).exists() or (path / RESULTS).exists():
        run = load_run(path)
        return {run.benchmark: run}
    runs: dict[str, RunDir] = {}
    for sub in sorted(p for p in path.iterdir() if (p / SUMMARY).is_file()):
        run = load_run(sub)
        if run.benchmark in runs:
            raise InputError(
                f"{path}: two runs of {run.benchmark} ({runs[run.benchmark].path.name}, "
                f"{sub.name}); point at one of them"
            )
        runs[run.benchmark] = run
    if not runs:
        raise InputError(f"{path}: not a run directory (no {SUMMARY} in it or its subfolders)")
    return runs


def iter_results(path: Path) -> Iterator[CandidateResult]:
    """Stream results.jsonl (see ``journal.read_lines`` for the crash rules)."""
    if not path.exists():
        raise InputError(f"{path}: cannot read: No such file or directory")
    return read_results(path)


class Failure(msgspec.Struct, frozen=True, kw_only=True):
    """One failing candidate of a problem, shown in the report as untrusted text."""

    sample_index: int
    status: str
    reason: str
    candidate: str
    output_tail: str


class ProblemTally(msgspec.Struct, kw_only=True):
    problem_id: str
    n: int = 0
    """Scored samples (infra_error excluded, as in the summary's pass@k)."""
    c: int = 0
    infra: int = 0
    failure: Failure | None = None


class Span(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One HTTP request on the wall clock, first send to final answer
    (endpoint runs only). With ``n`` per request its samples share one span."""

    started: float
    finished: float
    attempts: int
    """HTTP attempts of the request (retries included)."""
    rate_limited: int
    retries: int
    samples: int = 1


class Cause(msgspec.Struct, kw_only=True):
    """infra_error samples of one cause, and the first one's reason (for an
    endpoint failure, the server's own message)."""

    count: int = 0
    first: str = ""


class Tally(msgspec.Struct, kw_only=True):
    """Everything the report and the comparison need from results.jsonl."""

    problems: dict[str, ProblemTally]
    counts: dict[str, int]
    wall_ms: list[float]
    """Sandbox wall time of every executed (not dedup-cached) candidate."""
    gen_latency_ms: list[float]
    spans: list[Span]
    """One per HTTP request (samples of one request grouped)."""
    candidates: int
    causes: dict[str, Cause] = {}
    """infra_error samples by cause, in the order first seen."""
    last_finished: float = 0.0
    """Unix time of the latest verdict journaled (0: not recorded)."""
    stats: RunStats | None = None
    """The same fold summary.json is computed from (for a run without one)."""
    duplicates: int = 0
    """Lines repeating an earlier (problem, sample): a finished journal has none."""

    def pass_counts(self) -> dict[str, tuple[int, int]]:
        return {p.problem_id: (p.n, p.c) for p in self.problems.values() if p.n > 0}


def tally(
    benchmark: str,
    results: Iterable[CandidateResult],
    *,
    scoring: str | None = None,
    text_limit: int = 4000,
) -> Tally:
    """Fold results into per-problem counts and latency samples.

    (n, c) per problem are counted by the benchmark's suite, as the run's
    summary was (CRUXEval's official-mode rule included when the run was
    scored that way), so the report and the comparison agree with summary.json.
    Only the first failing candidate per problem is kept (cut to
    ``text_limit`` characters), so memory stays bounded for 164 x 200 runs.
    """
    stats = RunStats(benchmark)
    problems: dict[str, ProblemTally] = {}
    counts: Counter[str] = Counter()
    wall: list[float] = []
    gen: list[float] = []
    requests: dict[tuple[str, float, float], list[int]] = {}
    causes: dict[str, Cause] = {}
    total = 0
    last = 0.0
    keys: set[tuple[str, int]] = set()
    for r in results:
        total += 1
        keys.add((r.problem_id, r.sample_index))
        stats.add(r)
        counts[r.status] += 1
        p = problems.get(r.problem_id)
        if p is None:
            p = problems[r.problem_id] = ProblemTally(problem_id=r.problem_id)
        if r.status == "infra_error":
            p.infra += 1
            cause = causes.setdefault(r.infra_cause or "unknown", Cause())
            cause.count += 1
            cause.first = cause.first or r.reason[:text_limit]
        elif r.status != "passed" and (
            p.failure is None or r.sample_index < p.failure.sample_index
        ):
            p.failure = Failure(
                sample_index=r.sample_index,
                status=r.status,
                reason=r.reason[:text_limit],
                candidate=r.candidate[:text_limit],
                output_tail=r.output_tail[:text_limit],
            )
        if not r.cached and r.wall_ms is not None:
            wall.append(r.wall_ms)
        if r.latency_ms is not None:
            gen.append(r.latency_ms)
        last = max(last, r.finished_at or 0.0)
        if r.gen_started_at is not None and r.gen_finished_at is not None:
            _add_to_request(requests, r, r.gen_started_at, r.gen_finished_at)
    suite = get_suite(benchmark, Params(scoring="official" if scoring == "official" else "strict"))
    for pid, (n, c) in suite.pass_counts(stats.per_problem).items():
        problems[pid].n, problems[pid].c = n, c
    return Tally(
        problems=problems,
        counts=dict(counts),
        wall_ms=wall,
        gen_latency_ms=gen,
        spans=[
            Span(
                started=k[1],
                finished=k[2],
                attempts=v[0],
                rate_limited=v[1],
                retries=v[2],
                samples=v[3],
            )
            for k, v in requests.items()
        ],
        candidates=total,
        duplicates=total - len(keys),
        causes=causes,
        last_finished=last,
        stats=stats,
    )


def _add_to_request(
    requests: dict[tuple[str, float, float], list[int]],
    r: CandidateResult,
    started: float,
    finished: float,
) -> None:
    """The samples of one request (``n`` > 1) share its problem and both
    timestamps, and each carries the request's attempts but only its share of
    retries and 429s; grouping them counts HTTP requests, not samples."""
    acc = requests.setdefault((r.problem_id, started, finished), [max(r.attempts, 1), 0, 0, 0])
    acc[1] += r.rate_limited
    acc[2] += r.retry_count
    acc[3] += 1


def read_tally(run: RunDir) -> Tally:
    return tally(run.benchmark, iter_results(run.results_path), scoring=run.summary.scoring)
