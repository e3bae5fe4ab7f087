"""A warm, shared scorer: one started sandbox pool serving many callers.

For services that score answers one at a time (RL trainers computing
rewards, grading back ends, dashboards): the pool stays up, each call is a
verdict in milliseconds, and verdicts come from the same trusted path as
runs (strict scoring by default).

- Admission is first come, first served through a bounded queue: `score`
  waits when it is full (backpressure); ``wait=False`` raises `Busy`.
- A cancelled caller cancels only its own job (the sandbox kills and reaps
  its processes; the slot is started afresh for the next job).
- Identical answers to one problem (the suite's dedup key) run once, even
  when their callers overlap; verdicts are kept in a bounded LRU cache.
- Problems come by id from a benchmark's dataset, or from the caller as a
  dict in the benchmark's own format (validated, kept by content digest).
- A slot whose processes die is replaced and the job retried once there
  (see `aioeval.executors.local`): only a second failure is ``infra_error``.
- No run directory; ``journal=PATH`` appends every verdict to a
  results.jsonl-format file for callers who want one.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
import orjson

from aioeval.config import RunConfig, load_config
from aioeval.errors import AioevalError, CandidateFault, InputError, SandboxError
from aioeval.executors import make_executor
from aioeval.executors.base import Executor
from aioeval.run import guard
from aioeval.run.journal import Journal
from aioeval.suites import get_suite
from aioeval.suites.base import Suite
from aioeval.suites.crux_data import parse_problems as parse_crux
from aioeval.suites.humaneval_format import parse_humaneval
from aioeval.suites.mbpp_data import parse_mbpp
from aioeval.types import (
    Candidate,
    CandidateResult,
    Error,
    Execution,
    InfraError,
    Problem,
    Verdict,
    make_result,
)

PARSERS = {
    "human-eval": (parse_humaneval, "task_id"),
    "cruxeval-o": (parse_crux, "id"),
    "cruxeval-i": (parse_crux, "id"),
    "mbpp": (parse_mbpp, "task_id"),
}


class Busy(AioevalError):
    """The scorer's queue is full (raised by ``score(..., wait=False)``)."""


class UnknownProblem(InputError):
    """No such benchmark, or no such problem in its dataset."""


class Scorer:
    """``async with Scorer(config) as s: await s.score(...)``. Several may
    live in one process; nothing is global."""

    def __init__(
        self,
        config: RunConfig | None = None,
        *,
        queue: int = 64,
        cache: int = 100_000,
        problems: int = 10_000,
        executor: Executor | None = None,
        journal: str | Path | None = None,
    ) -> None:
        self.config = config if config is not None else load_config()
        self._executor = executor
        self._journal_path = Path(journal) if journal is not None else None
        self.journal: Journal | None = None
        """Every verdict appended as a results.jsonl row, when asked for."""
        self.pool: Executor | None = None
        self.queue = queue
        self._cache_size, self._problem_size = cache, problems
        self._admit: anyio.Semaphore | None = None
        self._suites: dict[str, tuple[Suite, dict[str, Problem]]] = {}
        self._loading = anyio.Lock()
        self._caller: OrderedDict[bytes, Problem] = OrderedDict()
        self._done: OrderedDict[bytes, tuple[Verdict, Execution]] = OrderedDict()
        self._pending: dict[bytes, anyio.Event] = {}
        self.waiting = 0
        """Callers waiting for admission (the queue is full)."""
        self.running = 0
        """Callers admitted: executing, or waiting for a free slot."""
        self.counts: Counter[str] = Counter()
        self.executed = 0

    async def __aenter__(self) -> Scorer:
        pool = self._executor or make_executor(self.config)
        await pool.start()
        try:
            sandbox = self.config.params.sandbox
            guard.check("score", sandbox.isolation, pool.layers, sandbox.memory_mb)
        except BaseException:
            await pool.aclose()
            raise
        self.pool = pool
        self._admit = anyio.Semaphore(pool.size + self.queue)
        if self._journal_path is not None:
            self.journal = Journal(self._journal_path)
        return self

    async def __aexit__(self, *exc: object) -> None:
        pool, self.pool = self.pool, None
        journal, self.journal = self.journal, None
        if journal is not None:
            await journal.aclose()
        if pool is not None:
            await pool.aclose()

    @property
    def slots(self) -> int:
        return self.pool.size if self.pool is not None else 0

    @property
    def in_flight(self) -> int:
        """Jobs on a slot now."""
        return min(self.running, self.slots)

    @property
    def queued(self) -> int:
        """Jobs not on a slot yet: admitted and waiting, or not admitted."""
        return self.waiting + max(0, self.running - self.slots)

    async def score(
        self,
        benchmark: str,
        problem: str | Mapping[str, Any],
        completion: str,
        *,
        wait: bool = True,
    ) -> CandidateResult:
        """The verdict on ``completion`` (the model's raw answer: fences are
        unwrapped as in runs) for a problem id or a problem dict."""
        if self._admit is None:
            raise RuntimeError("use Scorer inside 'async with'")
        suite, found = await self._problem(benchmark, problem)
        if not wait and self._admit.value == 0:
            raise Busy(f"the scorer is busy: {self.running} running, {self.waiting} waiting")
        self.waiting += 1
        try:
            await self._admit.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            text = suite.unwrap(found, completion)
            verdict, execution = await self._judged(suite, found, text)
        finally:
            self.running -= 1
            self._admit.release()
        cand = Candidate(problem_id=found.id, sample_index=0, raw=completion, text=text)
        result = make_result(cand, verdict, execution)
        self.counts[result.status] += 1
        if self.journal is not None:
            self.journal.write(result)
        return result

    async def score_many(
        self, items: Iterable[tuple[str, str | Mapping[str, Any], str]]
    ) -> AsyncIterator[CandidateResult]:
        """Verdicts for ``(benchmark, problem, completion)`` items, in order,
        scored concurrently as far as the queue allows."""
        items = list(items)
        results: list[CandidateResult | None] = [None] * len(items)
        ready = [anyio.Event() for _ in items]

        async def one(i: int) -> None:
            try:
                results[i] = await self.score(*items[i])
            finally:
                ready[i].set()

        async with anyio.create_task_group() as tg:
            for i in range(len(items)):
                tg.start_soon(one, i)
            for i in range(len(items)):
                await ready[i].wait()
                result = results[i]
                if result is not None:
                    yield result

    async def _judged(self, suite: Suite, problem: Problem, text: str) -> tuple[Verdict, Execution]:
        """Single flight per dedup key across callers, then the LRU cache."""
        key = _key(suite.name, problem, suite.dedup_key(problem, text))
        while True:
            hit = self._done.get(key)
            if hit is not None:
                self._done.move_to_end(key)
                verdict, execution = hit
                return verdict, Execution(cached=True, output_tail=execution.output_tail)
            waiter = self._pending.get(key)
            if waiter is None:
                break
            await waiter.wait()
        event = self._pending[key] = anyio.Event()
        try:
            verdict, execution = await self._run(suite, problem, text)
            if not isinstance(verdict, InfraError):
                self._done[key] = (verdict, execution)
                while len(self._done) > self._cache_size:
                    self._done.popitem(last=False)
        finally:
            del self._pending[key]
            event.set()
        return verdict, execution

    async def _run(self, suite: Suite, problem: Problem, text: str) -> tuple[Verdict, Execution]:
        assert self.pool is not None
        self.executed += 1
        try:
            return await suite.judge(problem, text, self.pool)
        except SandboxError:
            raise
        except CandidateFault as exc:
            return Error(reason=str(exc)[:500]), Execution()
        except Exception as exc:
            reason = f"the engine could not judge this answer: {type(exc).__name__}: {exc}"
            return InfraError(reason=reason[:500], cause="engine"), Execution()

    async def _problem(
        self, benchmark: str, problem: str | Mapping[str, Any]
    ) -> tuple[Suite, Problem]:
        suite, problems = await self._benchmark(benchmark)
        if isinstance(problem, str):
            found = problems.get(problem)
            if found is None:
                raise UnknownProblem(f"{benchmark} has no problem {problem!r}")
            return suite, found
        return suite, self._from_caller(benchmark, problem)

    async def _benchmark(self, name: str) -> tuple[Suite, dict[str, Problem]]:
        known = self._suites.get(name)
        if known is not None:
            return known
        if name not in PARSERS:
            raise UnknownProblem(f"unknown benchmark {name!r}; choose one of {', '.join(PARSERS)}")
        async with self._loading:
            if name not in self._suites:
                suite = get_suite(name, self.config.params)
                dataset = await suite.load(mode="score")
                self._suites[name] = (suite, {p.id: p for p in dataset.problems})
        return self._suites[name]

    def _from_caller(self, benchmark: str, fields: Mapping[str, Any]) -> Problem:
        """A problem dict in the benchmark's format, validated by the same
        parser as dataset files (errors name the field); kept by digest."""
        parse, id_field = PARSERS[benchmark]
        try:
            body = orjson.dumps(dict(fields), option=orjson.OPT_SORT_KEYS)
        except TypeError as exc:
            raise InputError(f"problem: not JSON data ({exc})") from None
        digest = hashlib.blake2b(benchmark.encode() + b"\0" + body, digest_size=16).digest()
        known = self._caller.get(digest)
        if known is not None:
            self._caller.move_to_end(digest)
            return known
        row = dict(fields)
        row.setdefault(id_field, "problem")
        (problem,) = parse(orjson.dumps(row), "problem")
        # Two callers' problems may share an id: the digest keeps them apart.
        problem = Problem(id=f"{problem.id}@{digest.hex()[:12]}", fields=problem.fields)
        self._caller[digest] = problem
        while len(self._caller) > self._problem_size:
            self._caller.popitem(last=False)
        return problem


def _key(benchmark: str, problem: Problem, body: str) -> bytes:
    """Ids are unique per benchmark (a caller's problem carries its digest)."""
    text = f"{benchmark}\0{problem.id}\0{body}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
