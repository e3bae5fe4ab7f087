"""HumanEval+ and MBPP+ (EvalPlus): each problem's base inputs and its many
extra ones, outputs compared with the reference's as EvalPlus compares them.

Data (see `data`): ``--dataset FILE`` in EvalPlus's JSONL format
(the release files, plain or gzipped), else a small bundled fixture written
for this project. The expected outputs and each input's reference time come
from running the canonical solution once in the sandbox (`truth`).

An answer is judged twice, as EvalPlus does: on the base inputs and on the
plus inputs, each a task of its own with its own budget (the sum of its
input limits, capped, plus a second), each input under
``max(min_time_limit_s, gt_time_limit_factor x reference time)`` of wall
time (``params.evalplus``). The verdict is the whole (passed only if both
parts pass); ``parts`` keeps both, and the summary reports pass@k on the
base inputs alone next to it, as ``<bench>.base.pass_at_<k>``.

Scoring (``params.scoring``):

- ``strict`` (default): the candidate's program runs in a child that only
  answers calls; the inputs, the expected outputs and the comparison
  (`harness`) live in the verifier, and the inputs are sent to the
  candidate as plain values. An input past its limit is the answer's
  ``timeout`` (EvalPlus counts it as a failure; either way it is not a pass).
- ``official``: one program, the candidate's code then the same harness, in
  the candidate's own process, as EvalPlus runs it.
"""

from __future__ import annotations

import ast
import functools
import marshal
import math
from collections import OrderedDict
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import msgspec

from aioeval.config import EvalPlusParams, Params
from aioeval.errors import ConfigError, InputError
from aioeval.executors.base import Executor
from aioeval.sandbox.protocol import Checked, Program
from aioeval.types import (
    Candidate,
    Dataset,
    Execution,
    InfraError,
    Passed,
    Problem,
    Prompt,
    Taken,
    Verdict,
    status_of,
)

from .. import targets
from ..base import (
    MockRecord,
    Mode,
    SuiteBase,
    dataset_of,
    fixture_records,
    offload,
    sample_rows,
    verdict_from_outcome,
)
from . import data, truth
from .harness import _AIOEVAL_NOT_NONE as NOT_NONE
from .harness import _aioeval_is_floats as is_floats

PARTS = ("base", "plus")
SYSTEM = (
    "You are a careful Python programmer. Reply with one self-contained Python "
    "script in a single ```python block."
)
_TOLERANCE = frozenset(
    {"_AIOEVAL_RTOL", "_aioeval_shape", "_aioeval_flat", "_aioeval_pairs"}
    | {"_aioeval_isclose", "_aioeval_allclose"}
)
"""The harness's names that only a comparison with a tolerance reaches."""
_MBPP = frozenset(
    {"_AIOEVAL_SET_EQ", "_AIOEVAL_NOT_NONE", "_aioeval_surface_area"}
    | {"_aioeval_digit_distance", "_aioeval_mbpp_exact"}
)
"""... and those only MBPP+'s own oracles reach."""


@functools.cache
def harness(tolerance: bool, mbpp: bool) -> str:
    """The harness's text without what a part never reaches: official
    scoring compiles it with every answer, and these parts are over half of
    its compile time."""
    text = resources.files("aioeval.suites.evalplus").joinpath("harness.py").read_text()
    left_out = (set() if tolerance else _TOLERANCE) | (set() if mbpp else _MBPP)
    kept = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module's docstring
        targets = node.targets if isinstance(node, ast.Assign) else []
        names = {getattr(node, "name", None)} | {getattr(t, "id", None) for t in targets}
        if not names & left_out:
            kept.append(ast.get_source_segment(text, node) or "")
    return "\n\n".join(kept) + "\n"


class _Sample(msgspec.Struct):
    task_id: str
    completion: str | None = None
    solution: str | None = None


def literal(value: Any) -> str:
    """Python source that evaluates to ``value`` (plain data only), in the
    harness's scope: a marshal blob the harness loads. Source of the value
    itself (repr) would be compiled by every test that runs it, which for
    hundreds of inputs costs far more than the test (tens of milliseconds
    per thousand; a blob of the same data compiles about 15 times faster).
    Format 2 writes no back references, so, as with repr, every occurrence
    loads as an object of its own."""
    try:
        blob = marshal.dumps(value, 2)
    except ValueError:
        raise InputError("an EvalPlus value holds something other than plain data") from None
    return f"_aioeval_marshal.loads({blob!r})"


class _Part(msgspec.Struct, frozen=True):
    """One part's test, ready to send: the verifier's text and the budget."""

    setup: str
    cpu_s: float


def test_text(
    problem: Problem,
    part: str,
    flavor: data.Flavor,
    args: list[Any],
    expected: list[Any],
    times: list[float],
    options: EvalPlusParams,
) -> _Part:
    """The harness and one part's data, as the text the test runs."""
    limits = [max(options.min_time_limit_s, options.gt_time_limit_factor * t) for t in times]
    budget = min(options.task_limit_s, math.fsum(limits)) + 1.0 + (1.0 if options.details else 0)
    f = problem.fields
    tolerance = float(f["atol"]) != 0 or any(map(is_floats, expected))
    lines = [
        harness(tolerance, flavor == "mbpp"),
        f"_aioeval_inputs = {literal(args)}",
        f"_aioeval_expected = {literal(expected)}",
        f"_aioeval_limits = {literal(limits)}",
        f"_aioeval_atol = {literal(float(f['atol']))}",
        f"_aioeval_flavor = {flavor!r}",
        f"_aioeval_entry = {f['entry_point']!r}",
        f"_aioeval_part = {part!r}",
        f"_aioeval_details = {options.details!r}",
    ]
    return _Part(setup="\n".join(lines) + "\n", cpu_s=budget)


KEEP_TESTS = 1024
"""Problems whose made tests are kept (every problem of the real sets)."""


class EvalPlus(SuiteBase):
    """One EvalPlus dataset flavor; see the module docstring."""

    name = "humaneval-plus"
    flavor: data.Flavor = "humaneval"
    figures: tuple[str, ...] = ("base",)

    def __init__(self, params: Params) -> None:
        super().__init__(params)
        self.scoring = params.scoring
        self.options = params.evalplus
        self.dataset_path = params.dataset_path
        self._tests: OrderedDict[str, dict[str, _Part]] = OrderedDict()
        self._locks: dict[str, anyio.Lock] = {}

    async def load(self, *, mode: Mode) -> Dataset:
        if self.dataset_path is None:
            name = f"{self.name}-fixture"
            return dataset_of(name, data.FIXTURE_VERSION, data.fixture(self.flavor), self.params)
        path = Path(self.dataset_path)
        if mode == "replay":
            raise ConfigError(
                f"--dataset {path}: llm-mock replays the bundled pre-scored {self.name} "
                "fixture, which is not for this dataset; add --set params.execute=true to "
                "run its canonical solutions, or score samples with aioeval score"
            )
        problems, name, version = await anyio.to_thread.run_sync(data.read_file, path)
        return dataset_of(name, version, problems, self.params)

    def prompt(self, problem: Problem) -> Prompt:
        text = problem.fields["prompt"]
        user = (
            "Solve the task below with a complete, self-contained Python script "
            "(imports included), in a single ```python code block:\n\n" + text.strip() + "\n"
        )
        return Prompt(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            text=text,
        )

    def take(self, problem: Problem, raw: str) -> Taken:
        """The whole program: what the answer defines, or, for a body, the
        prompt continued by it."""
        got = targets.take(raw, targets.humaneval(problem))
        if got.kind == "body":
            return Taken(text=problem.fields["prompt"] + got.text, kind=got.kind)
        return got

    def reference(self, problem: Problem) -> str:
        return problem.fields["prompt"] + problem.fields["canonical_solution"]

    async def judge(self, problem: Problem, text: str, pool: Executor) -> tuple[Verdict, Execution]:
        tests = await self._parts(problem, pool)
        entry = problem.fields["entry_point"]
        verdicts: list[tuple[Verdict, Execution]] = []
        for part in PARTS:
            test = tests[part]
            if self.scoring == "official":
                program = text + "\n\n" + test.setup + f"_aioeval_run({entry})\n"
                out = await pool.execute(Program(program=program, cpu_s=test.cpu_s))
            else:
                task = Checked(
                    program=text,
                    entry=entry,
                    setup=test.setup,
                    driver=f"_aioeval_run({entry})\n",
                    cpu_s=test.cpu_s,
                )
                out = await pool.execute(task)
            verdicts.append(verdict_from_outcome(out))
        return _combine(verdicts)

    async def _parts(self, problem: Problem, pool: Executor) -> dict[str, _Part]:
        """Both parts' tests, made once per problem (the reference runs then)."""
        made = self._tests.get(problem.id)
        if made is not None:
            self._tests.move_to_end(problem.id)
            return made
        lock = self._locks.setdefault(problem.id, anyio.Lock())
        async with lock:
            made = self._tests.get(problem.id)
            if made is None:
                made = {}
                not_none = self.flavor == "mbpp" and problem.fields["entry_point"] in NOT_NONE
                for part in PARTS:
                    args = data.inputs(problem, part, self.flavor)
                    outputs, times = await truth.compute(problem, part, args, not_none, pool)
                    size = len(problem.fields[f"{part}_input"])
                    made[part] = await offload(
                        size,
                        test_text,
                        problem,
                        part,
                        self.flavor,
                        args,
                        outputs,
                        times,
                        self.options,
                    )
                self._tests[problem.id] = made
                while len(self._tests) > KEEP_TESTS:  # callers' problems come and go
                    self._locks.pop(self._tests.popitem(last=False)[0], None)
        return made

    def mock_records(self) -> list[MockRecord]:
        return fixture_records(f"evalplus/{self.flavor}_plus_mock.jsonl")

    def read_samples(self, path: Path, dataset: Dataset) -> Iterator[Candidate]:
        """EvalPlus's samples: ``{"task_id", "solution"}`` (the whole program)
        or ``{"task_id", "completion"}`` (continuing the prompt)."""
        problems = {p.id: p for p in dataset.problems}
        decoder = msgspec.json.Decoder(_Sample)
        seen: dict[str, int] = {}
        out: list[Candidate] = []
        for lineno, row in sample_rows(path, decoder):
            problem = problems.get(row.task_id)
            if problem is None:
                raise InputError(f"{path}:{lineno}: unknown task_id {row.task_id!r}")
            if row.solution is not None:
                text = row.solution
            elif row.completion is not None:
                text = problem.fields["prompt"] + row.completion
            else:
                raise InputError(f"{path}:{lineno}: neither solution nor completion")
            index = seen[row.task_id] = seen.get(row.task_id, -1) + 1
            out.append(Candidate(problem_id=row.task_id, sample_index=index, raw=text, text=text))
        if not out:
            raise InputError(f"{path}: no samples found")
        return iter(out)


def _combine(verdicts: list[tuple[Verdict, Execution]]) -> tuple[Verdict, Execution]:
    """The whole verdict from the parts': passed only if every part passed,
    else the first part that did not (an engine fault stays one)."""
    for verdict, execution in verdicts:
        if isinstance(verdict, InfraError):
            return verdict, execution
    parts = {part: status_of(v) for part, (v, _) in zip(PARTS, verdicts, strict=True)}
    executions = [e for _, e in verdicts]
    execution = Execution(
        wall_ms=sum(e.wall_ms or 0.0 for e in executions),
        cpu_ms=sum(e.cpu_ms or 0.0 for e in executions),
        output_tail=next((e.output_tail for e in executions if e.output_tail), ""),
    )
    for part, (verdict, part_execution) in zip(PARTS, verdicts, strict=True):
        if not isinstance(verdict, Passed):
            reason = (
                verdict.reason if verdict.reason.startswith(part) else f"{part}: {verdict.reason}"
            )
            tail = part_execution.output_tail or execution.output_tail
            return msgspec.structs.replace(
                verdict, reason=reason, parts=parts
            ), msgspec.structs.replace(execution, output_tail=tail)
    return Passed(parts=parts), execution


class MbppPlus(EvalPlus):
    """MBPP+: EvalPlus's MBPP problems (its ``Mbpp/N`` ids) and their extra inputs."""

    name = "mbpp-plus"
    flavor: data.Flavor = "mbpp"
