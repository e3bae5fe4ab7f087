"""CRUXEval-O (predict ``f(input)``) and CRUXEval-I (find an input ``x`` with
``f(x) == output``), both accepted only by execution.

Two scoring modes (``params.scoring``):

- ``official`` reproduces the upstream evaluator: run
  ``code + "\\nassert " + output + " == " + generation`` with its skip rules
  (a skipped generation is a ``failed`` result marked ``skipped``; the
  per-problem n rule lives in ``aioeval.run.summary``).
- ``strict`` (default) judges values, not programs: an -O answer must be a
  literal and is compared in the engine without running anything; an -I
  answer must be exactly one call ``f(...)`` with literal arguments, which
  the sandbox passes to the problem's ``f`` as data, returning its value as
  plain builtin data that the engine compares. No text of the answer runs,
  so nothing in it (an always-equal object, ``f(x) or True``, reading the
  expected value, rebinding ``f``) can turn into a pass. Comparisons are
  type-exact: ``0`` is not ``False`` and ``1`` is not ``1.0``.

Data: ``params.dataset_path`` first, then (replay and reference runs) the
bundled fixture, else the pinned upstream file (see ``data``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from aioeval.config import Params
from aioeval.errors import ConfigError, InputError
from aioeval.executors.base import Executor
from aioeval.sandbox.protocol import Call, Program
from aioeval.sandbox.values import plain
from aioeval.types import (
    Candidate,
    Dataset,
    Error,
    Execution,
    Failed,
    Passed,
    Problem,
    Prompt,
    Taken,
    Verdict,
)

from ..answer_text import normalise
from ..base import (
    MockRecord,
    Mode,
    SuiteBase,
    dataset_of,
    fixture_records,
    offload,
    verdict_from_outcome,
)
from . import answers, data

SYSTEM = (
    "You are an expert Python programmer who predicts exactly what a piece of code "
    "does when it runs. You answer precisely and follow the requested answer format."
)

_ANSWER_FORMAT = (
    "Put the complete assertion on one line between [ANSWER] and [/ANSWER], "
    "like this:\n[ANSWER]\n{example}\n[/ANSWER]"
)

_TASKS = {
    "o": (
        "Here is a Python function `f` and an assertion that calls it on a concrete "
        "input. Work out the exact value the call returns and complete the assertion "
        "with it. Write that value as a Python literal: no function calls and no "
        "arithmetic left to evaluate. Report what the code really returns, even if "
        "the function looks wrong or unfinished."
    ),
    "i": (
        "Here is a Python function `f` and the value a call of it must return. Find an "
        "input for which `f` returns exactly that value. Several inputs may work; give "
        "one. Answer with a full assertion that calls `f` on your input and compares "
        "the result with the given value."
    ),
}

_EXAMPLES = {"o": "assert f(4) == 9", "i": "assert f([3, 8, 1]) == 8"}

_STYLES = {
    "direct": "Give only the answer, with no explanation.",
    "cot": (
        "First reason it through: follow the execution step by step and track the "
        "values of the variables. Then give your final answer."
    ),
}


def _problem_line(problem: Problem, task: answers.Task) -> str:
    f = problem.fields
    if task == "o":
        return f"assert f({f['input']}) == ??"
    return f"assert f(??) == {f['output']}"


class _CruxEval(SuiteBase):
    """Shared machinery; the subclasses fix the task."""

    name: str
    task: answers.Task
    default_k: tuple[int, ...] = (1, 5)  # what the CRUXEval paper reports

    def __init__(self, params: Params) -> None:
        super().__init__(params)
        self.scoring = params.scoring
        self.static_compare = params.static_compare
        self.style = params.prompt
        self._all_ids: frozenset[str] | None = None
        self._expected: dict[str, object] = {}

    # -- data -----------------------------------------------------------

    async def load(self, *, mode: Mode) -> Dataset:
        params = self.params
        if params.dataset_path and mode == "replay":
            raise ConfigError(
                f"--dataset {params.dataset_path}: llm-mock replays the bundled pre-scored "
                "fixture, which is not for this dataset; add --set params.execute=true to run "
                "its reference answers, or score generations with aioeval score"
            )
        if mode == "replay":
            problems, name = data.fixture_problems(), "cruxeval-mock-fixture"
            version = data.FIXTURE_VERSION
        elif params.dataset_path:
            problems, version = data.read_problems(params.dataset_path)
            name = "cruxeval"
        elif mode == "reference":
            problems, name = data.fixture_problems(), "cruxeval-fixture"
            version = data.FIXTURE_VERSION
        else:
            problems = await data.load_pinned(params.dataset_url)
            name, version = "cruxeval", data.PINNED_VERSION
        self._all_ids = frozenset(p.id for p in problems)
        return dataset_of(name, version, problems, params)

    # -- counting -------------------------------------------------------

    def pass_counts(self, per_problem: Mapping[str, list[int]]) -> dict[str, tuple[int, int]]:
        """Official scoring counts as the upstream evaluator does: a problem
        where nothing executed passed keeps every generation (n = all,
        c = 0); otherwise skipped generations drop out of n."""
        if self.scoring != "official":
            return super().pass_counts(per_problem)
        return {
            k: (v[0], 0) if v[1] == 0 else (v[0] - v[2], v[1])
            for k, v in per_problem.items()
            if v[0] > 0
        }

    def pass_at_k(self, n: int, c: int, k: int) -> float:
        """Upstream's estimator is 1.0 whenever n - c < k, which also covers an
        official list shrunk below k."""
        if self.scoring == "official" and n - c < k:
            return 1.0
        return super().pass_at_k(n, c, k)

    @property
    def comparable(self) -> bool:
        # Strict scoring is stricter than the upstream evaluator, so its
        # pass@k is not comparable with published (official) figures.
        return self.scoring == "official"

    # -- prompts and answers --------------------------------------------

    def prompt(self, problem: Problem) -> Prompt:
        user = "\n\n".join(
            [
                _TASKS[self.task],
                _STYLES[self.style],
                _ANSWER_FORMAT.format(example=_EXAMPLES[self.task]),
                "```python\n"
                + problem.fields["code"]
                + "\n"
                + _problem_line(problem, self.task)
                + "\n```",
            ]
        )
        return Prompt(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            text=SYSTEM + "\n\n" + user + "\n\n",
        )

    def take(self, problem: Problem, raw: str) -> Taken:
        """The ``[ANSWER]`` after line endings are unified and shown reasoning
        dropped (`answer_text.normalise`), as for the program suites."""
        return Taken(text=answers.extract_answer(normalise(raw), self.task))

    def reference(self, problem: Problem) -> str:
        f = problem.fields
        return f"assert f({f['input']}) == {f['output']}"

    def dedup_key(self, problem: Problem, text: str) -> str:
        if self.scoring == "official":
            return "official\0" + text  # the program is built from the exact text
        try:
            if self.task == "o":
                _, key = answers.output_literal(text)
            else:
                key = answers.input_answer(text, problem.fields["input"]).key
        except answers.AnswerRejected:
            return "rejected\0" + text
        return "strict\0" + key.hex()

    # -- judging ----------------------------------------------------------

    async def judge(self, problem: Problem, text: str, pool: Executor) -> tuple[Verdict, Execution]:
        if self.scoring == "official":
            return await self._judge_official(problem, text, pool)
        try:
            if self.task == "o":
                return await offload(len(text), self._judge_output, problem, text), Execution()
            return await self._judge_input(problem, text, pool)
        except answers.AnswerRejected as exc:
            return Failed(reason=str(exc)), Execution()

    async def _judge_official(
        self, problem: Problem, text: str, pool: Executor
    ) -> tuple[Verdict, Execution]:
        f = problem.fields
        skip = answers.official_skip(self.task, text, f["input"])
        if skip is not None:
            return Failed(reason=skip, skipped=True), Execution()
        if self.static_compare:
            decided = await offload(
                len(text), answers.static_official_verdict, f["code"], f["output"], text
            )
            if decided is not None:
                # Same verdict as executing the program: it only compares two literals.
                if decided:
                    return Passed(
                        reason="decided without execution: literal == literal"
                    ), Execution()
                return Failed(
                    reason="AssertionError (literal != literal, decided without execution)"
                ), Execution()
        program = answers.official_program(f["code"], f["output"], text)
        out = await pool.execute(Program(program=program))
        return verdict_from_outcome(out)

    def _judge_output(self, problem: Problem, text: str) -> Verdict:
        value, _ = answers.output_literal(text)
        return self._compare(problem, value)

    async def _judge_input(
        self, problem: Problem, text: str, pool: Executor
    ) -> tuple[Verdict, Execution]:
        answer = await offload(len(text), answers.input_answer, text, problem.fields["input"])
        task = Call(
            program=problem.fields["code"], entry="f", args=answer.args, args_source=answer.source
        )
        out = await pool.execute(task)
        verdict, execution = verdict_from_outcome(out)
        if not isinstance(verdict, Passed):
            return verdict, execution
        if out.value is None:
            return Error(reason="the sandbox returned no value for a value job"), execution
        try:
            value = plain.loads(out.value)
        except plain.NotPlain as exc:
            return Failed(reason=f"strict: the returned value is not plain data: {exc}"), execution
        return self._compare(problem, value), execution

    def _compare(self, problem: Problem, value: object) -> Verdict:
        """Type-exact equality with the expected output (see `plain.exact_equal`)."""
        if plain.exact_equal(self._expected_of(problem), value):
            return Passed()
        want = problem.fields["output"][:200]
        return Failed(reason=f"strict: f returns {want}, not {plain.safe_repr(value)}")

    def _expected_of(self, problem: Problem) -> object:
        if problem.id not in self._expected:
            self._expected[problem.id] = answers.expected_value(problem.fields["output"])
        return self._expected[problem.id]

    # -- fixtures and external samples ----------------------------------

    def mock_records(self) -> list[MockRecord]:
        return fixture_records(f"cruxeval_mock_{self.task}.jsonl")

    def read_samples(self, path: Path, dataset: Dataset) -> Iterator[Candidate]:
        """Generations in the upstream format ``{"sample_0": ["...", ...]}``.

        Each generation is an already extracted answer and is scored as
        written. Every problem of the dataset must be present; ids outside the
        dataset are an error unless they were only cut by ``params.limit``.
        """
        try:
            blob = path.read_bytes()
        except OSError as exc:
            raise InputError(f"{path}: cannot read generations: {exc.strerror}") from None
        try:
            table: Any = msgspec.json.decode(blob)
        except msgspec.DecodeError as exc:
            raise InputError(f"{path}: not valid JSON: {exc}") from None
        if not isinstance(table, dict):
            raise InputError(
                f'{path}: expected a JSON object {{"sample_0": ["...", ...], ...}}, '
                f"got {type(table).__name__}"
            )
        wanted = [p.id for p in dataset.problems]
        known = self._all_ids or frozenset(wanted)
        unknown = [k for k in table if k not in known]
        if unknown:
            raise InputError(f"{path}: {_ids(unknown)} not in the dataset")
        missing = [k for k in wanted if k not in table]
        if missing:
            raise InputError(f"{path}: no generations for {_ids(missing)}")
        out: list[Candidate] = []
        for pid in wanted:
            gens = table[pid]
            if not isinstance(gens, list) or not gens:
                raise InputError(f"{path}: {pid}: expected a non-empty list of strings")
            for index, gen in enumerate(gens):
                if not isinstance(gen, str):
                    raise InputError(
                        f"{path}: {pid}[{index}]: expected a string, got {type(gen).__name__}"
                    )
                out.append(Candidate(problem_id=pid, sample_index=index, raw=gen, text=gen))
        return iter(out)


def _ids(ids: list[str], show: int = 5) -> str:
    head = ", ".join(ids[:show])
    more = f" and {len(ids) - show} more" if len(ids) > show else ""
    return f"{len(ids)} problem id(s) ({head}{more})"


class CruxEvalO(_CruxEval):
    name = "cruxeval-o"
    task: answers.Task = "o"


class CruxEvalI(_CruxEval):
    name = "cruxeval-i"
    task: answers.Task = "i"
