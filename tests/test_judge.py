"""The judge tells the engine's faults from the answer's: a suite that
raises `CandidateFault` scores that answer ``error``; any other exception
while judging is ``infra_error`` with cause ``engine`` (never the model's)."""

from __future__ import annotations

import anyio
import pytest

from aioeval.config import Params
from aioeval.errors import CandidateFault
from aioeval.executors.base import Executor
from aioeval.run.contract import WorkItem
from aioeval.run.judge import Judge
from aioeval.suites.human_eval.suite import HumanEval
from aioeval.testing.executors import ScriptedExecutor
from aioeval.types import Candidate, CandidateResult, Execution, Problem, Verdict

PROBLEM = Problem(
    id="p/0",
    fields={"prompt": "def f():\n", "test": "def check(c):\n    pass\n", "entry_point": "f"},
)


class _Raising(HumanEval):
    def __init__(self, exc: Exception) -> None:
        super().__init__(Params())
        self.exc = exc

    async def judge(self, problem: Problem, text: str, pool: Executor) -> tuple[Verdict, Execution]:
        raise self.exc


def _result(exc: Exception) -> CandidateResult:
    judge = Judge(_Raising(exc), {PROBLEM.id: PROBLEM}, ScriptedExecutor(), Params())
    item = WorkItem(candidate=Candidate(problem_id=PROBLEM.id, sample_index=0, raw="x", text="x"))
    return anyio.run(judge.judge, item)


@pytest.mark.parametrize("exc", [RuntimeError("a bug"), KeyError("k"), MemoryError()])
def test_a_suite_bug_is_the_engines_fault(exc: Exception) -> None:
    result = _result(exc)
    assert result.status == "infra_error", result
    assert result.infra_cause == "engine"
    assert type(exc).__name__ in result.reason


def test_what_the_answer_caused_is_its_own_error() -> None:
    result = _result(CandidateFault("the answer is not a literal"))
    assert result.status == "error", result
    assert result.reason == "the answer is not a literal"
