"""MBPP-style problems: a short task in words, and assert statements that the
function the model writes must satisfy.

Data (see `data`): ``--dataset FILE`` in MBPP's JSONL shape (the
original MBPP release, a team's own tasks), else a small bundled fixture of
self-written problems.

Two scoring models (``params.scoring``), as for HumanEval:

- ``strict`` (default): the candidate's module (after the problem's
  ``test_setup_code``) runs in a sandboxed child that only answers calls;
  the asserts run in the slot's trusted verifier. Every name the asserts use
  that nothing else binds (see `data.TestPlan`) is, on the trusted side,
  a stub that calls the child's function of that name through the proxy, so
  the asserts compare fresh builtin values only. A small dispatcher placed
  before the candidate's code picks the function by name in the child: one
  proxy serves any number of functions, with no change to the sandbox.
- ``official``: one program, ``test_setup_code + code + asserts``, in one
  process (a candidate can forge a pass there; the summary says so).

Only ``test_list`` is scored, as MBPP's own figures are;
``challenge_test_list`` is read, checked and kept in the digest, not run.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import msgspec

from aioeval.config import Params
from aioeval.errors import ConfigError
from aioeval.executors.base import Executor
from aioeval.sandbox.protocol import Checked, Program
from aioeval.types import Candidate, Dataset, Execution, Problem, Prompt, Taken, Verdict

from .. import targets
from ..base import (
    MockRecord,
    Mode,
    SuiteBase,
    dataset_of,
    fixture_records,
    read_completions,
    require_references,
    verdict_from_outcome,
)
from . import data

MOCK_FIXTURE = "mbpp/mock.jsonl"
CALL = "_aioeval_mbpp_call"
"""The one entry point the verifier's proxy calls: ``CALL(name, *args, **kwargs)``."""

DISPATCH = (
    f"def {CALL}(_aioeval_name, /, *args, **kwargs):\n"
    "    fn = globals().get(_aioeval_name)\n"
    "    if fn is None:\n"
    "        raise NameError(f'name {_aioeval_name!r} is not defined')\n"
    "    return fn(*args, **kwargs)\n"
)

SYSTEM = (
    "You are a careful Python programmer. Write the function the user describes. "
    "Reply with Python code only, in one ```python block."
)


class _Line(msgspec.Struct):
    task_id: int | str
    completion: str


def child_program(problem: Problem, completion: str) -> str:
    """What the candidate's child runs: the dispatcher, the problem's setup,
    then the candidate's code (last, so nothing is appended to its text)."""
    return DISPATCH + problem.fields["test_setup_code"] + "\n" + completion


def verifier_setup(tests: tuple[str, ...], setup: str, code: str) -> str:
    """The trusted side's setup: imports the asserts reach, the problem's
    setup, and a stub per candidate function that calls through the proxy."""
    plan = data.plan_tests(tests, setup, code)
    lines = [f"import {m}" for m in plan.modules]
    lines.append(setup)
    for name in plan.functions:
        lines.append(f"def {name}(*args, **kwargs):\n    return {CALL}({name!r}, *args, **kwargs)")
    return "\n".join(lines) + "\n"


def driver(tests: tuple[str, ...]) -> str:
    """The asserts, each labelled so a failure says which test it was."""
    out = []
    for i, test in enumerate(tests, 1):
        tree = ast.parse(test)
        for node in tree.body:
            if isinstance(node, ast.Assert) and node.msg is None:
                node.msg = ast.Constant(f"test {i}: {test.strip()}")
        out.append(ast.unparse(tree))
    return "\n".join(out) + "\n"


@functools.lru_cache(maxsize=4096)
def _trusted_half(tests: tuple[str, ...], setup: str, code: str) -> tuple[str, str]:
    """(setup, driver) for the verifier, made once per problem: parsing and
    unparsing the asserts costs far more than a candidate's fork."""
    return verifier_setup(tests, setup, code), driver(tests)


def checked_task(problem: Problem, completion: str) -> Checked:
    fields = problem.fields
    setup, drive = _trusted_half(data.tests_of(problem), fields["test_setup_code"], fields["code"])
    return Checked(
        program=child_program(problem, completion), entry=CALL, setup=setup, driver=drive
    )


def build_program(problem: Problem, completion: str) -> str:
    """The single program of ``scoring: official``."""
    tests = "\n".join(data.tests_of(problem))
    return problem.fields["test_setup_code"] + "\n" + completion + "\n" + tests + "\n"


class Mbpp(SuiteBase):
    """MBPP-style problems, from ``--dataset FILE`` or the bundled fixture."""

    name = "mbpp"

    def __init__(self, params: Params) -> None:
        super().__init__(params)
        self.scoring = params.scoring
        self.dataset_path = params.dataset_path

    async def load(self, *, mode: Mode) -> Dataset:
        if self.dataset_path is None:
            problems = data.fixture_problems()
            return dataset_of(data.FIXTURE_NAME, data.FIXTURE_VERSION, problems, self.params)
        path = Path(self.dataset_path)
        if mode == "replay":
            raise ConfigError(
                f"--dataset {path}: llm-mock replays the bundled pre-scored MBPP fixture, "
                "which is not for this dataset; add --set params.execute=true to run its "
                "reference code, or score samples with aioeval score"
            )
        problems, name, version = data.read_mbpp_file(path)
        if mode == "reference":
            require_references(path, problems, "code", label="task_id ", runs="reference solutions")
        return dataset_of(name, version, problems, self.params)

    def prompt(self, problem: Problem) -> Prompt:
        task = problem.fields["text"].strip()
        example = data.tests_of(problem)[0].strip()
        user = (
            f"{task}\n\nYour function must pass a test like this one:\n\n{example}\n\n"
            "Write the complete function, with any imports it needs, in a single "
            "```python code block."
        )
        # Completion models continue a module: the task as its docstring.
        text = f'"""\n{task}\n\nFor example:\n{example}\n"""\n'
        return Prompt(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            text=text,
        )

    def take(self, problem: Problem, raw: str) -> Taken:
        return targets.take(raw, targets.mbpp(problem, data.tests_of(problem)))

    def reference(self, problem: Problem) -> str:
        return problem.fields["code"]

    async def judge(self, problem: Problem, text: str, pool: Executor) -> tuple[Verdict, Execution]:
        if self.scoring == "official":
            out = await pool.execute(Program(program=build_program(problem, text)))
        else:
            out = await pool.execute(checked_task(problem, text))
        return verdict_from_outcome(out)

    def mock_records(self) -> list[MockRecord]:
        return fixture_records(MOCK_FIXTURE)

    def read_samples(self, path: Path, dataset: Dataset) -> Iterator[Candidate]:
        """``{"task_id", "completion"}`` per line, ids as in the dataset (int or str)."""
        return read_completions(path, dataset, msgspec.json.Decoder(_Line))
