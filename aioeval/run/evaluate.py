"""One evaluation, start to summary: `evaluate`.

    dataset -> candidates -> executor -> verdicts -> journal -> summary

`evaluate` is a short list of steps: decide the run (`modes`), open its
directory (fresh or resumed), run the stages (`stages`, `judge`), summarise.
It runs on the caller's asyncio loop (uvloop included; the HTTP client is
aiohttp) and installs nothing global. Errors leave it as the engine's own
exceptions (`AioevalError` and its subclasses; several at once as one
`EngineErrors`, an AioevalError that holds them all), interrupts and
cancellation as themselves (`group_errors`). `streaming.open_run` runs it
with its results (or events) as an async iterator.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import msgspec

from aioeval.config import RunConfig, public_config
from aioeval.errors import AioevalError
from aioeval.events import Event, EventHook, GenerationUpdate, ResultReady, RunFinished, RunStarted
from aioeval.executors import Executor, ExecutorFacts, make_executor
from aioeval.run import guard, rundir
from aioeval.run.contract import default_buffer
from aioeval.run.group_errors import engine_error
from aioeval.run.journal import Journal
from aioeval.run.judge import Judge
from aioeval.run.modes import Plan, Platform, identify, mode_of, plan, platform_of
from aioeval.run.resume import ResumeState, check_identity
from aioeval.run.stages import TakeSignal, run_stages, with_pending
from aioeval.run.summary import RunStats, build_summary
from aioeval.suites import get_suite
from aioeval.suites.base import Suite
from aioeval.types import Candidate, CandidateResult, Summary

ExecutorFactory = Callable[[RunConfig], Executor]
ResultHook = Callable[[CandidateResult], Awaitable[None]]


class RunSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one evaluation needs; the CLI builds one from argv."""

    benchmark: str
    platform: Platform | None = None
    """llm-mock or llm-endpoint; None: what ``target.mode`` says (else llm-mock)."""
    config: RunConfig = RunConfig()
    out_dir: str | None = None
    samples: str | None = None
    """Score mode: a samples file produced elsewhere."""
    resume: bool = False
    """Continue the run journaled in ``out_dir``."""


@dataclass
class _Run:
    """The state `evaluate`'s steps share."""

    spec: RunSpec
    suite: Suite
    plan: Plan
    record: rundir.RunRecord
    out: Path = Path()
    stats: RunStats = field(default_factory=lambda: RunStats(""))
    resume: ResumeState | None = None
    pending: list[Candidate] = field(default_factory=list)
    skip: set[tuple[str, int]] = field(default_factory=set)
    executed_before: int = 0
    started: float = field(default_factory=time.perf_counter)


@dataclass
class _Executed:
    layers: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    facts: ExecutorFacts = field(default_factory=ExecutorFacts)
    saved: int = 0
    flips: int = 0


async def evaluate(
    spec: RunSpec,
    *,
    on_event: EventHook | None = None,
    on_result: ResultHook | None = None,
    pool_factory: ExecutorFactory | None = None,
) -> Summary:
    """Run one evaluation and return its summary (also written to disk).

    Results are journaled to ``<out>/results.jsonl`` as they finish, and
    passed to ``on_result`` if given. With ``spec.resume`` the run continues
    from the journal in ``spec.out_dir``.
    """
    try:
        return await _evaluate(spec, on_event or _ignore, on_result, pool_factory or make_executor)
    except BaseExceptionGroup as group:
        raise engine_error(group) from None


async def _evaluate(
    spec: RunSpec, emit: EventHook, on_result: ResultHook | None, make_pool: ExecutorFactory
) -> Summary:
    emit = _watched(emit)
    run = await _decide(spec, emit)
    # Off the event loop: a resumed journal is read and rewritten whole, and
    # the loop may be serving others (a service embedding the engine).
    await anyio.to_thread.run_sync(_open_directory, run)
    gen_journal = Journal(run.out / rundir.GENERATIONS) if run.plan.mode == "endpoint" else None
    try:
        async with Journal(run.out / rundir.RESULTS) as journal:
            sink = _sink(run, journal, emit, on_result)
            if run.plan.producer is None:
                emit(
                    RunStarted(benchmark=spec.benchmark, total=run.plan.total, out_dir=str(run.out))
                )
                for result in run.plan.replay:
                    await sink(result)
                executed = _Executed()
            else:
                executed = await _execute(run, make_pool, sink, emit, journal, gen_journal)
    finally:
        if gen_journal is not None:
            await gen_journal.aclose()
    summary = build_summary(
        run.suite,
        spec.config,
        run.plan,
        run.record,
        run.stats,
        isolation=executed.layers,
        missing=executed.missing,
        facts=executed.facts,
        saved=executed.saved,
        notes=_run_notes(run, executed, emit.generation),
        wall_s=time.perf_counter() - run.started,
    )
    rundir.write_json_atomic(run.out / rundir.SUMMARY, summary)
    emit(RunFinished(summary=summary))
    return summary


async def _decide(spec: RunSpec, emit: EventHook) -> _Run:
    """Platform, mode, suite, dataset and producer; nothing written yet."""
    cfg = spec.config
    started = rundir.now()
    platform = platform_of(spec.platform, cfg)
    mode = mode_of(platform, spec.samples, cfg)
    suite = get_suite(spec.benchmark, cfg.params)
    skip: set[tuple[str, int]] = set()
    the_plan = await plan(suite, mode, cfg, samples=spec.samples, emit=emit, skip=skip)
    samples = str(Path(spec.samples).resolve()) if spec.samples is not None else None
    record = rundir.RunRecord(
        benchmark=spec.benchmark,
        platform=platform,
        mode=mode,
        samples=samples,
        dataset=identify(the_plan.dataset, cfg),
        config=public_config(cfg),
        started_at=started,
    )
    return _Run(
        spec=spec,
        suite=suite,
        plan=the_plan,
        record=record,
        stats=RunStats(spec.benchmark),
        skip=skip,
    )


def _open_directory(run: _Run) -> None:
    """A fresh run directory, or the journal of the run being resumed
    (verdicts kept, completions to re-judge, samples to skip)."""
    spec = run.spec
    if not spec.resume:
        run.out = rundir.create(spec.out_dir, spec.benchmark)
        rundir.write_json_atomic(run.out / rundir.RUN, run.record)
        return
    if not spec.out_dir:
        raise AioevalError("--resume needs the run directory")
    resume = run.resume = ResumeState(Path(spec.out_dir))
    check_identity(resume.stored, run.record, resume.run_dir)
    resume.compact(run.stats.add, run.stats.carry)
    resume.load_pending()
    run.skip |= resume.done | set(resume.pending)
    run.pending = list(resume.pending.values())
    run.executed_before = run.stats.executions
    run.out = resume.run_dir
    run.record = msgspec.structs.replace(
        resume.stored, resumed_at=[*resume.stored.resumed_at, run.record.started_at]
    )
    rundir.write_json_atomic(run.out / rundir.RUN, run.record)


def _sink(
    run: _Run, journal: Journal, emit: EventHook, on_result: ResultHook | None
) -> Callable[[CandidateResult], Awaitable[None]]:
    async def sink(result: CandidateResult) -> None:
        journal.write(result)
        run.stats.add(result)
        emit(ResultReady(result=result))
        if on_result is not None:
            await on_result(result)

    return sink


async def _execute(
    run: _Run,
    make_pool: ExecutorFactory,
    sink: Callable[[CandidateResult], Awaitable[None]],
    emit: EventHook,
    journal: Journal,
    gen_journal: Journal | None,
) -> _Executed:
    """Start the executor, run the stages, re-check timeouts if asked."""
    assert run.plan.producer is not None
    cfg = run.spec.config
    pool = make_pool(cfg)
    try:
        await pool.start()
        sandbox = cfg.params.sandbox
        guard.check(run.plan.mode, sandbox.isolation, pool.layers, sandbox.memory_mb)
        remaining = max(0, run.plan.total - len(run.skip)) if run.resume else run.plan.total
        emit(
            RunStarted(
                benchmark=run.spec.benchmark,
                total=remaining,
                out_dir=str(run.out),
                layers=pool.layers,
                warnings=pool.warnings,
            )
        )
        problems = {p.id: p for p in run.plan.dataset.problems}
        judge = Judge(run.suite, problems, pool, cfg.params)
        taken = TakeSignal()
        producer = with_pending(run.pending, run.plan.producer, run.skip, gen_journal, taken)
        buffer = cfg.params.buffer or default_buffer(pool.size)
        await run_stages(producer, judge, sink, workers=pool.size, buffer=buffer, taken=taken)
        flips = 0
        if judge.timeouts:
            await journal.aclose()
            flips = await judge.recheck(run.out / rundir.RESULTS, run.stats)
        return _Executed(
            layers=pool.layers,
            missing=pool.missing,
            facts=pool.facts(),
            saved=judge.saved,
            flips=flips,
        )
    finally:
        await pool.aclose()


class _watched:
    """Passes events on, keeping the generation stage's last snapshot."""

    def __init__(self, emit: EventHook) -> None:
        self.emit = emit
        self.generation: GenerationUpdate | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, GenerationUpdate):
            self.generation = event
        self.emit(event)


def _run_notes(run: _Run, executed: _Executed, generation: GenerationUpdate | None) -> list[str]:
    notes = list(run.plan.notes)
    if generation is not None and generation.ignored_hints:
        notes.append(
            f"endpoint: {generation.ignored_hints} rate-limit hints ignored as absurd "
            "(a wait or reset beyond a day)"
        )
    if run.spec.config.params.recheck_timeouts:
        notes.append(f"recheck_timeouts: {executed.flips} timeout verdicts flipped on re-check")
    accepted = guard.accepted(run.plan.mode, run.spec.config.params.sandbox, executed.layers)
    if accepted:
        notes.append(accepted)
    if run.resume is not None:
        notes.append(
            f"resumed: kept {run.resume.kept} journaled verdicts, executed "
            f"{run.stats.executions - run.executed_before} more, re-judged {len(run.pending)} "
            f"journaled completions, retried {run.resume.dropped_infra} infra_error samples"
        )
    return notes


def _ignore(_event: object) -> None:
    pass
