"""The run: dataset -> candidates -> sandbox pool -> verdicts -> journal -> summary.

One anyio task group wires the stages with bounded memory object streams:

    producer --(candidates, buffer B)--> executors x 2W --(results, W)--> writer

B (``params.buffer``, default max(64, 4 x workers)) is the backpressure: when every
sandbox slot is busy and B candidates are waiting, the producer (generation,
for endpoint runs) blocks instead of piling completions up in memory. The
writer journals each result as soon as it exists and folds it into streaming
counts; nothing per candidate is kept after that.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, cast

import anyio
import msgspec
from anyio.streams.memory import (
    MemoryObjectReceiveStream,
    MemoryObjectSendStream,
    MemoryObjectStreamStatistics,
)

from .config import RunConfig, public_config
from .errors import ConfigError
from .events import EventHook, ResultReady, RunFinished, RunStarted
from .journal import Journal, read_results, rewrite_journal
from .pool import LocalPool, SandboxPool, pool_facts
from .resume import GenerationRecord, ResumeState, check_identity
from .sandbox.protocol import Limits
from .suites import get_suite
from .suites.base import Suite, digest_problems
from .summary import RunStats
from .types import (
    STATUSES,
    Candidate,
    CandidateResult,
    Dataset,
    DatasetInfo,
    Error,
    Execution,
    Failed,
    InfraError,
    Passed,
    Problem,
    Summary,
    Timeout,
    Verdict,
    make_result,
)

Platform = Literal["llm-mock", "llm-endpoint"]


class RunSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one evaluation needs; the CLI builds one from argv."""

    benchmark: str
    platform: Platform = "llm-mock"
    config: RunConfig = RunConfig()
    out_dir: str | None = None
    samples: str | None = None
    """Score mode: a samples file produced elsewhere."""
    resume: bool = False
    """Continue the run journaled in ``out_dir``."""


class WorkItem(msgspec.Struct, frozen=True, kw_only=True):
    """A candidate on its way to the sandbox; ``verdict`` is set when it was
    already decided upstream (e.g. generation gave up: infra_error)."""

    candidate: Candidate
    verdict: Verdict | None = None


Producer = Callable[[MemoryObjectSendStream[WorkItem]], Awaitable[None]]
PoolFactory = Callable[[RunConfig], SandboxPool]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def identify(dataset: Dataset, cfg: RunConfig) -> DatasetInfo:
    """Dataset identity. Generation retries change what a run measures, so a
    retried run gets its own version label and digest."""
    version, digest = dataset.version, dataset.digest
    retry = cfg.params.retry
    if retry is not None:
        version += "+retry"
        digest = hashlib.sha256(
            f"{digest}|retry:{retry.max_attempts}:{retry.backoff_base_s}:{retry.backoff_max_s}".encode()
        ).hexdigest()
    return DatasetInfo(name=dataset.name, version=version, digest=digest, size=dataset.size)


def default_buffer(workers: int) -> int:
    """Completions allowed to wait for a sandbox slot: a few KB each, so 64
    costs well under a megabyte and keeps n-sample requests large."""
    return max(64, 4 * workers)


def default_out_dir(benchmark: str) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{benchmark}-{stamp}-{secrets.token_hex(2)}"


def prepare_out_dir(spec: RunSpec) -> Path:
    out = Path(spec.out_dir) if spec.out_dir else default_out_dir(spec.benchmark)
    results = out / "results.jsonl"
    if results.exists() and results.stat().st_size > 0:
        raise ConfigError(f"{out}: already holds a run (results.jsonl); choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{out}: cannot create output directory: {exc.strerror}") from None
    return out


def write_json_atomic(path: Path, obj: object) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(obj), indent=2) + b"\n")
    os.replace(tmp, path)


def local_pool(cfg: RunConfig) -> SandboxPool:
    sb = cfg.params.sandbox
    limits = Limits(
        cpu_s=cfg.params.timeout_s,
        wall_s=cfg.wall_timeout_s,
        memory_mb=sb.memory_mb,
        fsize_mb=sb.fsize_mb,
        nofile=sb.nofile,
        output_tail=sb.output_tail,
        disk_mb=sb.disk_mb,
    )
    return LocalPool(
        workers=cfg.workers, limits=limits, hash_seed=sb.hash_seed, isolation=sb.isolation
    )


def select_pool(cfg: RunConfig) -> SandboxPool:
    """The pool ``params.executor`` asks for; Ray is imported only when chosen."""
    if cfg.params.executor == "ray":
        from .ray_pool import RayPool

        return RayPool(cfg)
    return local_pool(cfg)


class Judge:
    def __init__(
        self,
        suite: Suite,
        problems: dict[str, Problem],
        pool: SandboxPool,
        cfg: RunConfig,
    ) -> None:
        self.suite = suite
        self.problems = problems
        self.pool = pool
        self.cfg = cfg
        self.dedup = cfg.params.dedup
        # Keys are 16-byte digests, not candidate texts, so the cache costs
        # tens of bytes per distinct candidate however long the texts are.
        self._done: dict[bytes, tuple[Verdict, Execution]] = {}
        self._pending: dict[bytes, anyio.Event] = {}
        self.saved = 0
        self.timeouts: list[WorkItem] = []
        """Timed-out work, kept only when params.recheck_timeouts is on."""

    async def judge(self, item: WorkItem) -> CandidateResult:
        cand = item.candidate
        if item.verdict is not None:
            return make_result(cand, item.verdict, Execution())
        problem = self.problems[cand.problem_id]
        if not self.dedup:
            verdict, execution = await self.suite.judge(
                problem, cand.text, self.pool, self.cfg.params
            )
            return make_result(cand, verdict, execution)
        key = hashlib.blake2b(
            cand.problem_id.encode() + b"\0" + self.suite.dedup_key(problem, cand.text).encode(),
            digest_size=16,
        ).digest()
        while True:
            hit = self._done.get(key)
            if hit is not None:
                self.saved += 1
                verdict, execution = hit
                return make_result(
                    cand, verdict, Execution(cached=True, output_tail=execution.output_tail)
                )
            waiter = self._pending.get(key)
            if waiter is None:
                break
            await waiter.wait()
        event = self._pending[key] = anyio.Event()
        try:
            verdict, execution = await self.suite.judge(
                problem, cand.text, self.pool, self.cfg.params
            )
            if not isinstance(verdict, InfraError):
                self._done[key] = (verdict, execution)
        finally:
            del self._pending[key]
            event.set()
        if isinstance(verdict, Timeout) and self.cfg.params.recheck_timeouts:
            self.timeouts.append(item)
        return make_result(cand, verdict, execution)

    async def recheck(self, item: WorkItem) -> CandidateResult:
        """Run a timed-out candidate again, without the cache."""
        problem = self.problems[item.candidate.problem_id]
        verdict, execution = await self.suite.judge(
            problem, item.candidate.text, self.pool, self.cfg.params
        )
        return make_result(item.candidate, verdict, execution)


async def _run_stages(
    producer: Producer,
    judge: Judge,
    sink: Callable[[CandidateResult], Awaitable[None]],
    *,
    workers: int,
    buffer: int,
) -> None:
    send_work, recv_work = anyio.create_memory_object_stream[WorkItem](buffer)
    send_res, recv_res = anyio.create_memory_object_stream[CandidateResult](workers)

    async def produce() -> None:
        async with send_work:
            await producer(send_work)

    async def execute(
        recv: MemoryObjectReceiveStream[WorkItem], send: MemoryObjectSendStream[CandidateResult]
    ) -> None:
        async with recv, send:
            async for item in recv:
                await send.send(await judge.judge(item))

    async def write() -> None:
        async with recv_res:
            async for result in recv_res:
                await sink(result)

    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        # Two executors per slot: while one waits for its outcome frame the
        # other is already queued, so a slot never idles between candidates.
        async with recv_work, send_res:
            for _ in range(max(1, 2 * workers)):
                tg.start_soon(execute, recv_work.clone(), send_res.clone())
        tg.start_soon(write)


def iter_producer(items: Iterable[Candidate]) -> Producer:
    async def produce(send: MemoryObjectSendStream[WorkItem]) -> None:
        for cand in items:
            await send.send(WorkItem(candidate=cand))

    return produce


def reference_candidates(suite: Suite, dataset: Dataset) -> list[Candidate]:
    out = []
    for p in dataset.problems:
        ref = suite.reference(p)
        out.append(Candidate(problem_id=p.id, sample_index=0, raw=ref, text=suite.unwrap(p, ref)))
    return out


async def evaluate(
    spec: RunSpec,
    *,
    on_event: EventHook | None = None,
    on_result: Callable[[CandidateResult], Awaitable[None]] | None = None,
    pool_factory: PoolFactory | None = None,
) -> Summary:
    """Run one evaluation and return its summary (also written to disk).

    Works inside any running anyio-compatible event loop; it installs
    nothing global. Results are journaled to ``<out>/results.jsonl`` as they
    finish, and passed to ``on_result`` if given. With ``spec.resume`` the
    run continues from the journal in ``spec.out_dir``.
    """
    cfg = spec.config
    emit: EventHook = on_event or (lambda _e: None)
    suite = get_suite(spec.benchmark)
    started, t0 = _now(), time.perf_counter()
    mode = _mode(spec)
    dataset = await suite.load(cfg.params, mode=mode)
    resume = ResumeState(Path(spec.out_dir)) if spec.resume and spec.out_dir else None
    if spec.resume and resume is None:
        raise ConfigError("--resume needs the run directory")

    producer: Producer | None = None
    replay_results: list[CandidateResult] = []
    skip: set[tuple[str, int]] = set()
    if mode == "replay":
        replay_results = _replay(suite, dataset)
        total = len(replay_results)
    elif mode == "reference":
        cands = reference_candidates(suite, dataset)
        producer, total = iter_producer(cands), len(cands)
    elif mode == "score":
        assert spec.samples is not None
        cands = list(suite.read_samples(Path(spec.samples), dataset))
        present = {c.problem_id for c in cands}
        if len(present) < dataset.size:
            kept = [p for p in dataset.problems if p.id in present]
            dataset = Dataset(
                name=dataset.name,
                version=dataset.version,
                digest=digest_problems(kept),
                problems=kept,
            )
        producer, total = iter_producer(cands), len(cands)
    else:
        from .generate import endpoint_producer

        # skip is filled in place below on --resume; the producer reads it when
        # it starts, so samples already done are never requested (or paid for).
        producer, total = await endpoint_producer(suite, dataset, cfg, emit, skip)

    info = identify(dataset, cfg)
    run_record = {
        "benchmark": spec.benchmark,
        "platform": spec.platform,
        "mode": mode,
        "samples": spec.samples,
        "dataset": msgspec.to_builtins(info),
        "config": public_config(cfg),
        "started_at": started,
    }
    stats = RunStats(spec.benchmark)
    pending: list[Candidate] = []
    if resume is not None:
        check_identity(resume.stored, run_record, resume.run_dir)
        resume.compact(stats.add, stats.carry)
        resume.load_pending()
        skip |= resume.done | set(resume.pending)
        pending = list(resume.pending.values())
        executed_before = stats.executions
        out = resume.run_dir
        run_record = {
            **resume.stored,
            "resumed_at": [*resume.stored.get("resumed_at", []), started],
        }
    else:
        out = prepare_out_dir(spec)
    write_json_atomic(out / "run.json", run_record)
    layers: list[str] = []
    saved = 0
    facts: dict[str, Any] = {}
    flips = 0
    remaining = max(0, total - len(skip)) if resume is not None else total
    gen_journal = Journal(out / "generations.jsonl") if mode == "endpoint" else None
    with Journal(out / "results.jsonl") as journal:

        async def sink(result: CandidateResult) -> None:
            journal.write(result)
            stats.add(result)
            emit(ResultReady(result=result))
            if on_result is not None:
                await on_result(result)

        if producer is None:
            emit(RunStarted(benchmark=spec.benchmark, total=total, out_dir=str(out)))
            for r in replay_results:
                await sink(r)
        else:
            pool = (pool_factory or select_pool)(cfg)
            try:
                start = getattr(pool, "start", None)
                if start is not None:
                    await start()
                layers = pool.layers
                emit(
                    RunStarted(
                        benchmark=spec.benchmark,
                        total=remaining,
                        out_dir=str(out),
                        layers=layers,
                        warnings=list(getattr(pool, "warnings", [])),
                    )
                )
                judge = Judge(suite, {p.id: p for p in dataset.problems}, pool, cfg)
                buffer = cfg.params.buffer or default_buffer(pool.size)
                await _run_stages(
                    _with_pending(pending, producer, skip, gen_journal),
                    judge,
                    sink,
                    workers=pool.size,
                    buffer=buffer,
                )
                saved = judge.saved
                facts = pool_facts(pool)
                if judge.timeouts:
                    flips = await _recheck(judge, journal, stats, out)
            finally:
                await pool.aclose()
                if gen_journal is not None:
                    gen_journal.close()

    incomplete = dict(stats.infra_causes)
    notes = []
    if cfg.params.recheck_timeouts:
        notes.append(f"recheck_timeouts: {flips} timeout verdicts flipped on re-check")
    if resume is not None:
        notes.append(
            f"resumed: kept {resume.kept} journaled verdicts, executed "
            f"{stats.executions - executed_before} more, re-judged {len(pending)} journaled "
            f"completions, retried {resume.dropped_infra} infra_error samples"
        )
    summary = Summary(
        benchmark=spec.benchmark,
        dataset=info,
        measurements=stats.measurements(cfg),
        platform=spec.platform,
        complete=not incomplete,
        counts={s: stats.counts.get(s, 0) for s in STATUSES},
        incomplete=incomplete,
        candidates=stats.candidates,
        executions=stats.executions,
        executions_saved=saved,
        scoring=cfg.params.scoring if spec.benchmark.startswith("cruxeval") else None,
        isolation=layers,
        model=cfg.target.model if spec.platform == "llm-endpoint" else None,
        started_at=started,
        finished_at=_now(),
        wall_s=round(time.perf_counter() - t0, 3),
        notes=notes,
        **facts,
    )
    write_json_atomic(out / "summary.json", summary)
    emit(RunFinished(summary=summary))
    return summary


def _replay(suite: Suite, dataset: Dataset) -> list[CandidateResult]:
    """The bundled pre-scored fixture, as results (nothing is executed)."""
    ids = {p.id for p in dataset.problems}
    tags = {"passed": Passed, "failed": Failed, "timeout": Timeout, "error": Error}
    out = []
    for rec in suite.mock_records():
        if rec.problem_id in ids:
            cand = Candidate(
                problem_id=rec.problem_id,
                sample_index=rec.sample_index,
                raw=rec.completion,
                text=rec.completion,
            )
            out.append(make_result(cand, tags[rec.status](reason=rec.reason), Execution()))
    return out


class _JournalingSend:
    """The producer's view of the work stream: drops samples already done,
    journals each new generation the moment it arrives, then sends into the
    real bounded stream, so the producer still feels its backpressure (and
    can read its fill level through ``statistics``)."""

    def __init__(
        self,
        send: MemoryObjectSendStream[WorkItem],
        skip: set[tuple[str, int]],
        gen_journal: Journal | None,
    ) -> None:
        self._send = send
        self._skip = skip
        self._journal = gen_journal

    def _admit(self, item: WorkItem) -> bool:
        key = (item.candidate.problem_id, item.candidate.sample_index)
        if key in self._skip:
            return False
        if self._journal is not None and item.verdict is None:
            self._journal.write(GenerationRecord(candidate=item.candidate))
        return True

    async def send(self, item: WorkItem) -> None:
        if self._admit(item):
            await self._send.send(item)

    def send_nowait(self, item: WorkItem) -> None:
        if self._admit(item):
            self._send.send_nowait(item)

    def statistics(self) -> MemoryObjectStreamStatistics:
        return self._send.statistics()

    def close(self) -> None:
        """The pipeline closes the real stream when the producer returns."""

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> _JournalingSend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


def _with_pending(
    pending: list[Candidate],
    producer: Producer,
    skip: set[tuple[str, int]],
    gen_journal: Journal | None,
) -> Producer:
    """Feed journaled-but-unjudged completions first, then the producer's
    items minus those already done, journaling new generations on arrival."""

    async def produce(send: MemoryObjectSendStream[WorkItem]) -> None:
        for cand in pending:
            await send.send(WorkItem(candidate=cand))
        await producer(
            cast(MemoryObjectSendStream[WorkItem], _JournalingSend(send, skip, gen_journal))
        )

    return produce


async def _recheck(judge: Judge, journal: Journal, stats: RunStats, out: Path) -> int:
    """Re-run timed-out candidates on the now idle pool; replace verdicts that
    flip (the journal is rewritten so each sample stays listed once)."""
    replaced: dict[tuple[str, int], CandidateResult] = {}
    for item in judge.timeouts:
        result = await judge.recheck(item)
        if result.status != "timeout" and result.status != "infra_error":
            replaced[(result.problem_id, result.sample_index)] = result
    if not replaced:
        return 0
    journal.close()
    path = out / "results.jsonl"

    def merged() -> Iterator[CandidateResult]:
        for r in read_results(path):
            new = replaced.get((r.problem_id, r.sample_index))
            if new is not None:
                stats.remove(r)
                stats.add(new)
                r = new
            yield r

    rewrite_journal(path, merged())
    return len(replaced)


def _mode(spec: RunSpec) -> str:
    if spec.samples is not None:
        return "score"
    if spec.platform == "llm-endpoint":
        return "endpoint"
    if spec.platform != "llm-mock":
        raise ConfigError(f"unknown platform {spec.platform!r}; choose llm-mock or llm-endpoint")
    return "reference" if spec.config.params.execute else "replay"


class RunHandle:
    """An evaluation in progress: iterate results as they finish, then read
    ``summary``."""

    def __init__(self, recv: MemoryObjectReceiveStream[CandidateResult]) -> None:
        self._recv = recv
        self.summary: Summary | None = None

    def __aiter__(self) -> AsyncIterator[CandidateResult]:
        return self._recv.__aiter__()


@asynccontextmanager
async def open_run(spec: RunSpec, *, on_event: EventHook | None = None) -> AsyncIterator[RunHandle]:
    """``async with open_run(spec) as run: async for result in run: ...``

    The evaluation runs in a task group bound to the ``async with`` block;
    leaving the block early cancels it (and kills its sandboxes).
    """
    send, recv = anyio.create_memory_object_stream[CandidateResult](64)
    handle = RunHandle(recv)

    async def on_result(result: CandidateResult) -> None:
        try:
            await send.send(result)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async def runner() -> None:
        async with send:
            handle.summary = await evaluate(spec, on_event=on_event, on_result=on_result)

    async with anyio.create_task_group() as tg:
        tg.start_soon(runner)
        try:
            yield handle
        finally:
            recv.close()
            if handle.summary is None:
                tg.cancel_scope.cancel()
