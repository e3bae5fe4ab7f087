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
  dict in the benchmark's own format: bounded in size, parsed by the
  suite's parser in a bounded child process, kept by content digest in an
  LRU bounded in bytes (see `_problems`).
- ``score_many`` runs its items in the scorer's own task group, so a caller
  may leave its loop early (``break``, an exception): its items are
  cancelled and nothing else is touched.
- A slot whose processes die is replaced and the job retried once there
  (see `aioeval.executors.local`): only a second failure is ``infra_error``.
- No run directory; ``journal=PATH`` appends every verdict to a
  results.jsonl-format file for callers who want one.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec

from aioeval.config import RunConfig, load_config
from aioeval.errors import AioevalError, CandidateFault, DatasetError, InputError, SandboxError
from aioeval.executors import make_executor
from aioeval.executors.base import Executor
from aioeval.run import guard
from aioeval.run.journal import Journal
from aioeval.suites import get_suite
from aioeval.suites.base import Suite
from aioeval.suites.cruxeval.data import parse_problems as parse_crux
from aioeval.suites.evalplus.data import parse as parse_evalplus
from aioeval.suites.human_eval.data import parse_humaneval
from aioeval.suites.livecodebench.data import parse_lcb
from aioeval.suites.livecodebench.io_data import parse_io
from aioeval.suites.mbpp.data import parse_mbpp
from aioeval.types import (
    NO_CODE,
    Candidate,
    CandidateResult,
    Error,
    Execution,
    Failed,
    InfraError,
    Problem,
    Verdict,
    make_result,
)

from ._lru import OnceLRU
from ._problems import FIELD_BYTES, KEEP_BYTES, PROBLEM_BYTES, CallerProblems

PARSERS = {
    "human-eval": (parse_humaneval, "task_id"),
    "cruxeval-o": (parse_crux, "id"),
    "cruxeval-i": (parse_crux, "id"),
    "mbpp": (parse_mbpp, "task_id"),
    "humaneval-plus": (parse_evalplus, "task_id"),
    "mbpp-plus": (parse_evalplus, "task_id"),
    "livecodebench": (parse_lcb, "question_id"),
    "io-tests": (parse_io, "id"),
}
"""Each benchmark a caller may bring problems for: the suite's own parser
(run in the bounded parser child) and the field that names a problem."""
DETAILED = frozenset({"livecodebench", "io-tests"})
"""Benchmarks whose tests are data, which give per-test detail when asked
(``params.livecodebench.partial_credit``); the others ignore ``detail``."""


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
        problem_bytes: int = PROBLEM_BYTES,
        field_bytes: int = FIELD_BYTES,
        problems_bytes: int = KEEP_BYTES,
    ) -> None:
        """``queue``: callers admitted beyond the pool's slots; ``cache``:
        verdicts kept; ``problems`` / ``problems_bytes``: callers' problems
        kept (count and bytes of JSON); ``problem_bytes`` / ``field_bytes``:
        the largest caller problem accepted, whole and per field."""
        self.config = config if config is not None else load_config()
        self._executor = executor
        self._journal_path = Path(journal) if journal is not None else None
        self.journal: Journal | None = None
        """Every verdict appended as a results.jsonl row, when asked for."""
        self.pool: Executor | None = None
        self.queue = queue
        self._admit: anyio.Semaphore | None = None
        self._work: anyio.abc.TaskGroup | None = None
        self._suites: dict[tuple[str, bool], Suite] = {}
        self._datasets: dict[str, dict[str, Problem]] = {}
        self._loading: dict[str, anyio.Lock] = {}
        self.callers = CallerProblems(
            field_bytes=field_bytes,
            problem_bytes=problem_bytes,
            keep_bytes=problems_bytes,
            keep_count=problems,
        )
        """Problems callers brought, kept by digest."""
        self._done: OnceLRU[tuple[Verdict, Execution]] = OnceLRU(
            count=cache, keep=lambda done: not isinstance(done[0], InfraError)
        )
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
        self._work = anyio.create_task_group()
        await self._work.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        work, self._work = self._work, None
        try:
            if work is not None:  # score_many's items still running end here
                work.cancel_scope.cancel()
                # Only a cancellation goes through the task group; any other
                # error leaves this block as it came (not in a group).
                cancelled = isinstance(exc[1], anyio.get_cancelled_exc_class())
                await work.__aexit__(*(exc if cancelled else (None, None, None)))
        finally:
            pool, self.pool = self.pool, None
            journal, self.journal = self.journal, None
            with anyio.CancelScope(shield=True):
                await self.callers.aclose()
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
        detail: bool = False,
    ) -> CandidateResult:
        """The verdict on ``completion`` (the model's raw answer: fences are
        unwrapped as in runs) for a problem id or a problem dict. With
        ``detail``, benchmarks whose tests are data (``livecodebench``,
        ``io-tests``) also give tests passed of all and the first failing
        test; the verdict is the same either way."""
        if self._admit is None:
            raise RuntimeError("use Scorer inside 'async with'")
        detail = detail and benchmark in DETAILED
        suite, found = await self._problem(benchmark, problem, detail)
        taken = suite.take(found, completion)
        cand = Candidate(
            problem_id=found.id,
            sample_index=0,
            raw=completion,
            text=taken.text,
            extraction=taken.kind,
        )
        if taken.kind == "none":  # nothing to run: failed as in runs
            return self._finish(make_result(cand, Failed(reason=NO_CODE), Execution()))
        if not wait and self._admit.value == 0:
            raise Busy(f"the scorer is busy: {self.running} running, {self.waiting} waiting")
        self.waiting += 1
        try:
            await self._admit.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            verdict, execution = await self._judged(suite, found, taken.text, detail)
        finally:
            self.running -= 1
            self._admit.release()
        return self._finish(make_result(cand, verdict, execution))

    def _finish(self, result: CandidateResult) -> CandidateResult:
        self.counts[result.status] += 1
        if self.journal is not None:
            self.journal.write(result)
        return result

    async def score_many(
        self, items: Iterable[tuple[str, str | Mapping[str, Any], str]], *, detail: bool = False
    ) -> AsyncIterator[CandidateResult]:
        """Verdicts for ``(benchmark, problem, completion)`` items, in order,
        scored concurrently as far as the queue allows. An item's error is
        raised when its turn comes. Leaving the loop early cancels the items
        not yet yielded, and nothing else, when the generator is closed: at
        once with ``contextlib.aclosing``, else when it is collected."""
        work = self._work
        if work is None:
            raise RuntimeError("use Scorer inside 'async with'")
        items = list(items)
        results: list[CandidateResult | Exception | None] = [None] * len(items)
        ready = [anyio.Event() for _ in items]
        scope = anyio.CancelScope()

        async def one(i: int) -> None:
            try:
                results[i] = await self.score(*items[i], detail=detail)
            except Exception as exc:
                results[i] = exc
            finally:
                ready[i].set()

        async def all_items() -> None:
            try:
                with scope:
                    async with anyio.create_task_group() as tg:
                        for i in range(len(items)):
                            tg.start_soon(one, i)
            finally:
                finished.set()

        finished = anyio.Event()
        work.start_soon(all_items)
        try:
            for i in range(len(items)):
                await ready[i].wait()
                result = results[i]
                if isinstance(result, Exception):
                    raise result
                if result is None:
                    raise RuntimeError("the Scorer closed while score_many was running")
                yield result
        finally:
            scope.cancel()
            with anyio.CancelScope(shield=True):
                await finished.wait()

    async def _judged(
        self, suite: Suite, problem: Problem, text: str, detail: bool
    ) -> tuple[Verdict, Execution]:
        """Single flight per dedup key across callers, then the LRU cache
        (verdicts with detail carry more: they are kept apart)."""
        name = f"{suite.name}+detail" if detail else suite.name
        key = _key(name, problem, suite.dedup_key(problem, text))
        (verdict, execution), cached = await self._done.get(
            key, lambda: self._run(suite, problem, text)
        )
        if cached:
            return verdict, Execution(cached=True, output_tail=execution.output_tail)
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
        self, benchmark: str, problem: str | Mapping[str, Any], detail: bool
    ) -> tuple[Suite, Problem]:
        suite = self._suite(benchmark, detail)
        if isinstance(problem, str):
            found = (await self._dataset(benchmark)).get(problem)
            if found is None:
                raise UnknownProblem(f"{benchmark} has no problem {problem!r}")
            return suite, found
        # A caller's own problem needs the suite, not its dataset.
        parse, id_field = PARSERS[benchmark]
        return suite, await self.callers.get(benchmark, problem, parse, id_field)

    def _suite(self, name: str, detail: bool = False) -> Suite:
        """The benchmark's suite, one with per-test detail when asked for."""
        key = (name, detail)
        suite = self._suites.get(key)
        if suite is None:
            if name not in PARSERS:
                known = ", ".join(PARSERS)
                raise UnknownProblem(f"unknown benchmark {name!r}; choose one of {known}")
            params = self.config.params
            if detail:
                limits = msgspec.structs.replace(params.livecodebench, partial_credit=True)
                params = msgspec.structs.replace(params, livecodebench=limits)
            suite = self._suites[key] = get_suite(name, params)
        return suite

    async def _dataset(self, name: str) -> dict[str, Problem]:
        """The benchmark's problems by id, loaded once (a dataset that cannot
        be had is a DatasetError, tried again on the next call)."""
        known = self._datasets.get(name)
        if known is not None:
            return known
        async with self._loading.setdefault(name, anyio.Lock()):
            if name not in self._datasets:
                try:
                    dataset = await self._suite(name).load(mode="score")
                except DatasetError as exc:
                    raise DatasetError(f"{name}: dataset not available: {exc}") from None
                self._datasets[name] = {p.id: p for p in dataset.problems}
        return self._datasets[name]


def _key(benchmark: str, problem: Problem, body: str) -> bytes:
    """Ids are unique per benchmark (a caller's problem carries its digest)."""
    text = f"{benchmark}\0{problem.id}\0{body}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=32).digest()
