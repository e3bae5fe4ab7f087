"""The judge: one verdict per candidate, identical candidates executed once.

Deduplication is single-flight: the first copy of a (problem, answer) pair
is executed, later copies wait for it and reuse its verdict (marked
``cached``). What counts as identical is the suite's `dedup_key`, which must
only merge candidates certain to execute identically. A `CandidateFault` a
suite raises while judging an answer is that answer's ``error``; any other
exception is the engine's (``infra_error``, cause ``engine``: never counted
against the model, and the run is incomplete); only the sandbox pool failing
as a whole (SandboxError) stops the run.

With ``params.recheck_timeouts`` every timed-out candidate (copies included,
with or without dedup) is run once more when the pipeline has drained, and
all copies of one that flips get the new verdict, so identical candidates
never end with contradictory verdicts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import anyio

from aioeval.config import Params
from aioeval.errors import CandidateFault, InputError, SandboxError
from aioeval.executors.base import Executor
from aioeval.run.contract import WorkItem
from aioeval.run.journal import read_results, rewrite_journal
from aioeval.run.summary import RunStats
from aioeval.suites.base import Suite, offload
from aioeval.types import (
    NO_CODE,
    CandidateResult,
    Error,
    Execution,
    Failed,
    InfraError,
    Problem,
    Timeout,
    Verdict,
    make_result,
)


class Judge:
    def __init__(
        self, suite: Suite, problems: dict[str, Problem], pool: Executor, params: Params
    ) -> None:
        self.suite = suite
        self.problems = problems
        self.pool = pool
        self.params = params
        # Keys are 16-byte digests, not candidate texts, so the cache costs
        # tens of bytes per distinct candidate however long the texts are.
        self._done: dict[bytes, tuple[Verdict, Execution]] = {}
        self._pending: dict[bytes, anyio.Event] = {}
        self.saved = 0
        self.timeouts: dict[bytes, list[WorkItem]] = {}
        """Timed-out work by key, kept only when params.recheck_timeouts is on."""

    async def judge(self, item: WorkItem) -> CandidateResult:
        cand = item.candidate
        if item.verdict is not None:
            return make_result(cand, item.verdict, Execution())
        if cand.extraction == "none":
            # Nothing to run: the model wrote no code, which is not a Python error.
            return make_result(cand, Failed(reason=NO_CODE), Execution())
        problem = self.problems[cand.problem_id]
        key = await self._key(problem, cand.text)
        if not self.params.dedup:
            verdict, execution = await self._judge(problem, cand.text)
            return self._done_with(item, key, verdict, execution)
        while True:
            hit = self._done.get(key)
            if hit is not None:
                self.saved += 1
                verdict, execution = hit
                cached = Execution(cached=True, output_tail=execution.output_tail)
                return self._done_with(item, key, verdict, cached)
            waiter = self._pending.get(key)
            if waiter is None:
                break
            await waiter.wait()
        event = self._pending[key] = anyio.Event()
        try:
            verdict, execution = await self._judge(problem, cand.text)
            if not isinstance(verdict, InfraError):
                self._done[key] = (verdict, execution)
        finally:
            del self._pending[key]
            event.set()
        return self._done_with(item, key, verdict, execution)

    def _done_with(
        self, item: WorkItem, key: bytes, verdict: Verdict, execution: Execution
    ) -> CandidateResult:
        if isinstance(verdict, Timeout) and self.params.recheck_timeouts:
            self.timeouts.setdefault(key, []).append(item)
        return make_result(item.candidate, verdict, execution)

    async def recheck(self, journal: Path, stats: RunStats) -> int:
        """Run each distinct timed-out candidate again on the now idle pool,
        without the cache; every copy of one that flips gets the new verdict
        (the journal is rewritten so each sample stays listed once).
        Returns how many samples flipped."""
        replaced: dict[tuple[str, int], CandidateResult] = {}
        for items in self.timeouts.values():
            first = items[0].candidate
            verdict, execution = await self._judge(self.problems[first.problem_id], first.text)
            if isinstance(verdict, Timeout | InfraError):
                continue
            for n, item in enumerate(items):
                run = execution if n == 0 else Execution(cached=True)
                result = make_result(item.candidate, verdict, run)
                replaced[(result.problem_id, result.sample_index)] = result
        if replaced:
            # The whole journal is rewritten: off the event loop (the pipeline
            # has drained, so nothing else touches `stats` meanwhile).
            await anyio.to_thread.run_sync(
                rewrite_journal, journal, _merged(journal, replaced, stats)
            )
        return len(replaced)

    async def _judge(self, problem: Problem, text: str) -> tuple[Verdict, Execution]:
        try:
            return await self.suite.judge(problem, text, self.pool)
        except (SandboxError, InputError):
            raise  # the engine or the dataset, not this answer: the run stops
        except CandidateFault as exc:
            return Error(reason=str(exc)[:500]), Execution()
        except Exception as exc:
            reason = f"the engine could not judge this answer: {type(exc).__name__}: {exc}"
            return InfraError(reason=reason[:500], cause="engine"), Execution()

    async def _key(self, problem: Problem, text: str) -> bytes:
        """16-byte dedup key; a long text is keyed off the event loop."""
        body = await offload(len(text), self._key_text, problem, text)
        return hashlib.blake2b(
            problem.id.encode() + b"\0" + body.encode("utf-8", "surrogatepass"), digest_size=16
        ).digest()

    def _key_text(self, problem: Problem, text: str) -> str:
        if not self.params.dedup:
            return "exact\0" + text
        try:
            return self.suite.dedup_key(problem, text)
        except Exception:
            return "exact\0" + text  # an exact copy is always safe to merge


def _merged(
    path: Path, replaced: dict[tuple[str, int], CandidateResult], stats: RunStats
) -> Iterator[CandidateResult]:
    for r in read_results(path):
        new = replaced.get((r.problem_id, r.sample_index))
        if new is not None:
            stats.remove(r)
            stats.add(new)
            r = new
        yield r
