"""Data model: frozen, keyword-only msgspec Structs shared by every stage.

A verdict is a tagged union (``status`` is the tag), so a failing candidate is
data, never an exception. `CandidateResult` is one line of results.jsonl and
`Summary` is summary.json; their field names are a public contract (see
DESIGN.md): extend them, never rename.
"""

from __future__ import annotations

import time
from typing import Literal

import msgspec


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    """One benchmark problem. ``fields`` holds the suite-specific columns
    (prompt/test/entry_point for HumanEval, code/input/output for CRUXEval)."""

    id: str
    fields: dict[str, str]


class Dataset(msgspec.Struct, frozen=True, kw_only=True):
    """Problems plus the identity that makes two runs comparable."""

    name: str
    version: str
    digest: str
    problems: list[Problem]
    full_size: int | None = None
    """Problems in the dataset before ``params.limit`` cut it (None: nothing cut)."""

    @property
    def size(self) -> int:
        return len(self.problems)


class Generation(msgspec.Struct, frozen=True, kw_only=True):
    """Accounting of how one candidate was produced (generation side only)."""

    attempts: int = 0
    latency_ms: float | None = None
    retry_count: int = 0
    retry_overhead_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    started_at: float | None = None
    """Unix time the first request for this sample was sent."""
    finished_at: float | None = None
    """Unix time the final response arrived."""
    rate_limited: int = 0
    """429 answers seen while producing this sample."""


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """A model answer for one (problem, sample index): ``raw`` is what the
    model produced, ``text`` the unwrapped candidate that is executed."""

    problem_id: str
    sample_index: int
    raw: str
    text: str
    generation: Generation = Generation()
    extraction: str | None = None
    """How ``text`` was taken from ``raw`` (see `Taken`); None where nothing
    was taken (scored as given, a replayed fixture)."""


NO_CODE = "no code in the answer"
"""The reason of an answer in which extraction found no code (``failed``)."""


class Taken(msgspec.Struct, frozen=True, kw_only=True):
    """The program a suite takes from a model's answer, and how: ``block``
    (one fenced block), ``blocks`` (several: the program and what it uses),
    ``unfenced`` (code without a fence), ``body`` (a completion of the
    prompt's function), ``ambiguous`` (two blocks define the entry point
    differently: the last is taken), ``none`` (no code at all); None when
    the suite does not extract a program (CRUXEval's ``[ANSWER]``)."""

    text: str
    kind: str | None = None


class FailingTest(msgspec.Struct, frozen=True, kw_only=True):
    """The first test an answer failed: its place in the run order (from
    0), its input and expected output, each cut to a bounded length."""

    index: int
    input: str
    expected: str


class _Judged(msgspec.Struct, frozen=True, kw_only=True, tag_field="status"):
    """What every verdict on an answer carries."""

    reason: str = ""
    parts: dict[str, Status] | None = None
    """Verdicts on named subsets of the tests, where a suite reports them
    (EvalPlus: ``base`` and ``plus``); the verdict itself is the whole."""
    official_status: Status | None = None
    official_reason: str = ""
    """With ``scoring: both``: the official single program's verdict on the
    answer (the verdict itself is strict scoring's)."""
    tests_passed: int | None = None
    tests_total: int | None = None
    first_failing: FailingTest | None = None
    """Per-test detail, when asked for and the suite's tests are data."""


class Passed(_Judged, frozen=True, kw_only=True, tag="passed"):
    pass


class Failed(_Judged, frozen=True, kw_only=True, tag="failed"):
    skipped: bool = False
    """Not executed because a scoring rule refuses it (CRUXEval official mode);
    kept on the verdict so a deduplicated copy is marked skipped too."""


class Timeout(_Judged, frozen=True, kw_only=True, tag="timeout"):
    pass


class Error(_Judged, frozen=True, kw_only=True, tag="error"):
    pass


class InfraError(msgspec.Struct, frozen=True, kw_only=True, tag="infra_error", tag_field="status"):
    """The engine failed (worker crash, generation gave up), not the model."""

    reason: str = ""
    cause: str = "sandbox"


Verdict = Passed | Failed | Timeout | Error | InfraError
MAX_REASON = 2000
"""Characters of a verdict's reason kept in results.jsonl (reasons can carry
text a candidate chose, so they are bounded)."""
Status = Literal["passed", "failed", "timeout", "error", "infra_error"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "timeout", "error", "infra_error")


def status_of(verdict: Verdict) -> Status:
    return verdict.__struct_config__.tag  # type: ignore[return-value]


class Execution(msgspec.Struct, frozen=True, kw_only=True):
    """Sandbox accounting for one candidate (execution side only)."""

    wall_ms: float | None = None
    cpu_ms: float | None = None
    output_tail: str = ""
    cached: bool = False


class CandidateResult(msgspec.Struct, frozen=True, kw_only=True):
    """One line of results.jsonl."""

    problem_id: str
    sample_index: int
    status: Status
    reason: str
    candidate: str
    raw: str | None
    wall_ms: float | None
    cpu_ms: float | None
    cached: bool
    attempts: int
    latency_ms: float | None
    retry_count: int
    retry_overhead_ms: float
    prompt_tokens: int | None
    completion_tokens: int | None
    output_tail: str = ""
    infra_cause: str | None = None
    skipped: bool = False
    """Not executed under a scoring rule (CRUXEval official mode's skip rules)."""
    gen_started_at: float | None = None
    gen_finished_at: float | None = None
    rate_limited: int = 0
    finished_at: float | None = None
    """Unix time the verdict was journaled."""
    finish_reason: str | None = None
    """Why the model stopped: ``stop``, or ``length`` when the completion
    was cut at max_tokens (None: not generated here, or not reported)."""
    parts: dict[str, Status] | None = None
    """The verdict on named subsets of the tests, where the suite has them
    (EvalPlus: ``base`` and ``plus``); ``status`` is the verdict on all."""
    official_status: Status | None = None
    """With ``scoring: both``: the official single program's verdict
    (``status`` is strict scoring's); where the two differ, ``official_reason``
    is the single program's reason and ``reason`` strict's."""
    official_reason: str | None = None
    tests_passed: int | None = None
    """With per-test detail asked for (``partial_credit``): the tests the
    answer passed, of ``tests_total``; tests a time limit kept from running
    count as not passed. None without detail, or for a verdict that is not
    passed or failed."""
    tests_total: int | None = None
    first_failing: FailingTest | None = None
    """With per-test detail: the first failing test (None when all passed)."""
    extraction: str | None = None
    """How the program was taken from the model's answer (`Taken`'s kinds:
    ``block``, ``blocks``, ``unfenced``, ``body``, ``ambiguous``, ``none``);
    None when the candidate was run as given."""


def make_result(
    candidate: Candidate, verdict: Verdict, execution: Execution, *, skipped: bool = False
) -> CandidateResult:
    g = candidate.generation
    return CandidateResult(
        problem_id=candidate.problem_id,
        sample_index=candidate.sample_index,
        status=status_of(verdict),
        reason=verdict.reason[:MAX_REASON],
        candidate=candidate.text,
        raw=candidate.raw if candidate.raw != candidate.text else None,
        wall_ms=execution.wall_ms,
        cpu_ms=execution.cpu_ms,
        cached=execution.cached,
        attempts=g.attempts,
        latency_ms=g.latency_ms,
        retry_count=g.retry_count,
        retry_overhead_ms=g.retry_overhead_ms,
        prompt_tokens=g.prompt_tokens,
        completion_tokens=g.completion_tokens,
        output_tail=execution.output_tail,
        infra_cause=verdict.cause if isinstance(verdict, InfraError) else None,
        skipped=skipped or (isinstance(verdict, Failed) and verdict.skipped),
        gen_started_at=g.started_at,
        gen_finished_at=g.finished_at,
        rate_limited=g.rate_limited,
        finished_at=time.time(),
        finish_reason=g.finish_reason,
        parts=None if isinstance(verdict, InfraError) else verdict.parts,
        official_status=None if isinstance(verdict, InfraError) else verdict.official_status,
        tests_passed=None if isinstance(verdict, InfraError) else verdict.tests_passed,
        tests_total=None if isinstance(verdict, InfraError) else verdict.tests_total,
        first_failing=None if isinstance(verdict, InfraError) else verdict.first_failing,
        official_reason=None
        if isinstance(verdict, InfraError) or verdict.official_status is None
        else verdict.official_reason[:MAX_REASON],
        extraction=candidate.extraction,
    )


class Measurement(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    value: float
    unit: str
    klass: Literal["deterministic", "environmental"] = msgspec.field(name="class")
    official: bool


class DatasetInfo(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    version: str
    digest: str
    size: int


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """summary.json. The first three fields are the contract; the rest extend it."""

    benchmark: str
    dataset: DatasetInfo
    measurements: list[Measurement]
    platform: str = ""
    complete: bool = True
    counts: dict[str, int] = {}
    incomplete: dict[str, int] = {}
    candidates: int = 0
    executions: int = 0
    executions_saved: int = 0
    scoring: str | None = None
    isolation: list[str] = []
    missing: list[str] = []
    """Isolation layers the mode asked for that this machine could not provide."""
    model: str | None = None
    started_at: str = ""
    finished_at: str = ""
    wall_s: float = 0.0
    notes: list[str] = []
    executor: str = "local"
    """Where sandboxes ran: ``local`` or ``ray`` (params.executor)."""
    actors: int = 0
    """Ray sandbox actors started (replacements included); 0 for local."""
    nodes: int = 1
    """Machines that executed candidates."""
    infra_retries: int = 0
    """Executions sent again after an engine fault (dead template, lost actor)."""
    disagreements: int | None = None
    """With ``scoring: both``: answers strict and official scoring judged
    differently (each has ``official_status`` in results.jsonl)."""
    verifier_isolation: list[str] = []
    """Isolation layers the tests ran under (strict scoring's verifiers, which
    run the problems' code: a check per confined child); empty when no
    verifier ran."""
    verifier_missing: list[str] = []
    """Layers the isolation mode asked for that the verifiers could not have."""
    extraction: dict[str, int] = {}
    """Answers by how their program was taken from the model's text
    (results' ``extraction``: ``block``, ``blocks``, ``unfenced``, ``body``,
    ``ambiguous``, ``none``); empty when every candidate ran as given."""

    def measurement(self, name: str) -> Measurement | None:
        for m in self.measurements:
            if m.name == name:
                return m
        return None


class Prompt(msgspec.Struct, frozen=True, kw_only=True):
    """A prompt in both API shapes: chat messages and plain completion text
    (a suite writes it, an endpoint codec sends it)."""

    messages: list[dict[str, str]]
    text: str
