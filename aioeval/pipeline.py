"""The run: dataset -> candidates -> sandbox pool -> verdicts -> journal -> summary.

One anyio task group wires the stages with bounded memory object streams:

    producer --(candidates, buffer B)--> executors x 2W --(results, W)--> writer

B (``params.buffer``, default 4 x workers) is the backpressure: when every
sandbox slot is busy and B candidates are waiting, the producer (generation,
for endpoint runs) blocks instead of piling completions up in memory. The
writer journals each result as soon as it exists and folds it into streaming
counts; nothing per candidate is kept after that.
"""

from __future__ import annotations

import datetime as _dt
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .config import RunConfig, public_config
from .errors import ConfigError
from .events import EventHook, ResultReady, RunFinished, RunStarted
from .journal import Journal
from .pool import LocalPool, SandboxPool, make_limits
from .suites import get_suite
from .suites.base import Suite
from .summary import RunStats
from .types import (
    Candidate,
    CandidateResult,
    Dataset,
    DatasetInfo,
    Execution,
    InfraError,
    Problem,
    Summary,
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
        import hashlib

        version += "+retry"
        digest = hashlib.sha256(
            f"{digest}|retry:{retry.max_attempts}:{retry.backoff_base_s}:{retry.backoff_max_s}".encode()
        ).hexdigest()
    return DatasetInfo(name=dataset.name, version=version, digest=digest, size=dataset.size)


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
    limits = make_limits(
        timeout_s=cfg.params.timeout_s,
        wall_s=cfg.wall_timeout_s,
        memory_mb=sb.memory_mb,
        fsize_mb=sb.fsize_mb,
        nofile=sb.nofile,
        output_tail=sb.output_tail,
    )
    return LocalPool(workers=cfg.workers, limits=limits, hash_seed=sb.hash_seed)


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
        self._done: dict[tuple[str, str], tuple[Verdict, Execution]] = {}
        self._pending: dict[tuple[str, str], anyio.Event] = {}
        self.saved = 0

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
        key = (cand.problem_id, self.suite.dedup_key(problem, cand.text))
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
        return make_result(cand, verdict, execution)


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
    finish, and passed to ``on_result`` if given.
    """
    cfg = spec.config
    emit: EventHook = on_event or (lambda _e: None)
    suite = get_suite(spec.benchmark)
    started, t0 = _now(), time.perf_counter()
    mode = _mode(spec)
    dataset = await suite.load(cfg.params, mode=mode)

    producer: Producer | None = None
    replay_results: list[CandidateResult] = []
    if mode == "replay":
        ids = {p.id for p in dataset.problems}
        from .types import Error, Failed, Passed, Timeout

        tags = {"passed": Passed, "failed": Failed, "timeout": Timeout, "error": Error}
        for rec in suite.mock_records():
            if rec.problem_id in ids:
                cand = Candidate(
                    problem_id=rec.problem_id,
                    sample_index=rec.sample_index,
                    raw=rec.completion,
                    text=rec.completion,
                )
                replay_results.append(
                    make_result(cand, tags[rec.status](reason=rec.reason), Execution())
                )
        total = len(replay_results)
    elif mode == "reference":
        cands = reference_candidates(suite, dataset)
        producer, total = iter_producer(cands), len(cands)
    elif mode == "score":
        assert spec.samples is not None
        cands = list(suite.read_samples(Path(spec.samples), dataset))
        present = {c.problem_id for c in cands}
        if len(present) < dataset.size:
            from .suites.base import digest_problems

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

        producer, total = await endpoint_producer(suite, dataset, cfg, emit)

    info = identify(dataset, cfg)
    out = prepare_out_dir(spec)
    write_json_atomic(
        out / "run.json",
        {
            "benchmark": spec.benchmark,
            "platform": spec.platform,
            "mode": mode,
            "samples": spec.samples,
            "dataset": msgspec.to_builtins(info),
            "config": public_config(cfg),
            "started_at": started,
        },
    )
    stats = RunStats(spec.benchmark)
    layers: list[str] = []
    saved = 0
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
            pool = (pool_factory or local_pool)(cfg)
            try:
                if isinstance(pool, LocalPool):
                    await pool.start()
                layers = pool.layers
                warnings = list(getattr(pool, "warnings", []))
                emit(
                    RunStarted(
                        benchmark=spec.benchmark,
                        total=total,
                        out_dir=str(out),
                        layers=layers,
                        warnings=warnings,
                    )
                )
                judge = Judge(suite, {p.id: p for p in dataset.problems}, pool, cfg)
                buffer = cfg.params.buffer or 4 * pool.size
                await _run_stages(producer, judge, sink, workers=pool.size, buffer=buffer)
                saved = judge.saved
            finally:
                await pool.aclose()

    incomplete = dict(stats.infra_causes)
    summary = Summary(
        benchmark=spec.benchmark,
        dataset=info,
        measurements=stats.measurements(cfg),
        platform=spec.platform,
        complete=not incomplete,
        counts={
            s: stats.counts.get(s, 0)
            for s in ("passed", "failed", "timeout", "error", "infra_error")
        },
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
    )
    write_json_atomic(out / "summary.json", summary)
    emit(RunFinished(summary=summary))
    return summary


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
