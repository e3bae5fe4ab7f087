"""LiveCodeBench-style problems: a program that reads stdin and writes
stdout, or a LeetCode-style ``Solution`` method called on JSON arguments.

Data (see `data`): ``--dataset FILE`` in LiveCodeBench's release JSONL
shape, else a small bundled fixture of self-written problems. Verdicts follow
LiveCodeBench's evaluator: every test (public, then private) must pass, each
under its own wall-clock limit (``params.livecodebench.test_timeout_s``,
upstream's 6 s), the whole answer under a CPU budget
(``problem_timeout_s``, by default upstream's whole-problem limit); a test
past its limit makes the answer's ``timeout``.

Two scoring models (``params.scoring``):

- ``strict`` (default): the candidate's program runs in a sandboxed child
  behind a small trusted wrapper (`child`) that only answers calls: run
  the program on this input and return what it printed, or call the method
  with these arguments. The tests, their expected outputs and the comparison
  (`checks`) stay in the slot's trusted verifier, which parses the JSON
  arguments, sends them as plain values and judges the plain values that
  come back. Nothing the candidate's process holds can make a pass.
- ``official``: the same wrapper, tests and comparison as one program in the
  candidate's process, as upstream runs them (a candidate can forge a pass
  there; the summary says so). A test past its limit fails the answer.

With ``params.livecodebench.partial_credit`` (strict scoring) the verifier
goes on past a failing test and the verdict carries tests passed of all and
the first failing test (`tally`); the verdict itself is unchanged.
"""

import functools
import inspect
from collections.abc import Iterator
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
    dataset_of,
    fixture_records,
    require_references,
    verdict_from_outcome,
)
from . import checks as lcb_checks
from . import child as lcb_child
from . import data
from . import tally as lcb_tally

MOCK_FIXTURE = "livecodebench/mock.jsonl"
ENTRY = "_aioeval_lcb"
CHILD_SOURCE = inspect.getsource(lcb_child)
CHECKS_SOURCE = inspect.getsource(lcb_checks)

# The prompt keeps the layout of upstream's generic chat prompt (question,
# format, answer headings; starter code or a stdin/stdout skeleton in a
# fence; see ``lcb_runner/prompts/code_generation.py``), in words of our own.
SYSTEM = (
    "You are a skilled Python programmer. Given a problem statement, write a "
    "correct Python program that meets it and passes every test."
)
WITH_STARTER = (
    "Complete the starter code below to solve the problem, and put your code "
    "between the delimiters."
)
WITHOUT_STARTER = (
    "Write a program that reads its input from stdin, solves the problem and "
    "prints the answer to stdout (do not hard-code the sample inputs). Put your "
    "code between the delimiters below; when run, it must read the input, run "
    "the algorithm and write the output to STDOUT."
)


class _Line(msgspec.Struct):
    """A samples line: ``{"task_id", "completion"}`` or upstream's
    ``{"question_id", "code_list"}``."""

    task_id: str | None = None
    question_id: str | None = None
    completion: str | None = None
    code_list: list[str] | None = None


def user_prompt(problem: Problem) -> str:
    f = problem.fields
    text = f"### Question:\n{f['question_content']}\n\n"
    if f["starter_code"]:
        text += f"### Format: {WITH_STARTER}\n```python\n{f['starter_code']}\n```\n\n"
    else:
        text += f"### Format: {WITHOUT_STARTER}\n```python\n# YOUR CODE HERE\n```\n\n"
    return text + "### Answer: (use the provided format with backticks)\n\n"


def extract_code(raw: str) -> str:
    """Upstream's extraction for chat models: the lines between the last two
    lines that contain a fence; nothing when there are fewer than two."""
    lines = raw.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


def kind_of(problem: Problem) -> str:
    return "functional" if problem.fields["func_name"] else "stdin"


def child_program(problem: Problem, code: str) -> str:
    """The wrapper, then the candidate's program as a string literal."""
    return (
        f"{CHILD_SOURCE}\n_AIOEVAL_SOURCE = {code!r}\n"
        f"_AIOEVAL_KIND = {kind_of(problem)!r}\n_AIOEVAL_FUNC = {problem.fields['func_name']!r}\n"
    )


@functools.lru_cache(maxsize=256)
def _tests_source(tests_json: str) -> str:
    """The comparison code and the tests as literals (made once per problem:
    a problem's tests can be megabytes)."""
    tests = data.parse_tests(tests_json)
    return f"{CHECKS_SOURCE}\n_LCB_TESTS = {tests!r}\n"


@functools.lru_cache(maxsize=256)
def _tests(tests_json: str) -> tuple[tuple[str, str], ...]:
    return tuple(data.parse_tests(tests_json))


def _test_count(tests_json: str) -> int:
    return len(_tests(tests_json))


def _driver(problem: Problem, within: str, limit: float, tag: str = "") -> str:
    """The call that runs the tests: `checks.run_tests`, or with a
    ``tag`` `checks.tally_tests` (per-test detail)."""
    args = f"{ENTRY}, {within}, {limit!r}, {kind_of(problem)!r}, _LCB_TESTS"
    if tag:
        return f"tally_tests({args}, {tag!r})\n"
    return f"run_tests({args})\n"


class LiveCodeBench(SuiteBase):
    """LiveCodeBench-style problems, from ``--dataset FILE`` or the bundled fixture."""

    name = "livecodebench"
    default_k: tuple[int, ...] = (1, 5)
    """Upstream reports pass@1 and pass@5."""

    def __init__(self, params: Params) -> None:
        super().__init__(params)
        self.scoring = params.scoring
        self.dataset_path = params.dataset_path
        self.limits = params.livecodebench

    def budget(self, problem: Problem) -> float:
        """CPU seconds for one answer over all its tests."""
        if self.limits.problem_timeout_s is not None:
            return self.limits.problem_timeout_s
        count = _test_count(problem.fields["tests"])
        return (self.limits.test_timeout_s + 1) * count + 5

    def checked_task(self, problem: Problem, code: str, tag: str = "") -> Checked:
        return Checked(
            program=child_program(problem, code),
            entry=ENTRY,
            setup=_tests_source(problem.fields["tests"]),
            driver=_driver(problem, "__aioeval_within__", self.limits.test_timeout_s, tag),
            cpu_s=self.budget(problem),
        )

    def build_program(self, problem: Problem, code: str) -> Program:
        """The single program of ``scoring: official``."""
        text = (
            child_program(problem, code)
            + _tests_source(problem.fields["tests"])
            + _driver(problem, "alarm_within", self.limits.test_timeout_s)
        )
        return Program(program=text, cpu_s=self.budget(problem))

    label = "LiveCodeBench"
    """How messages name the suite's bundled fixture."""

    def fixture(self) -> tuple[list[Problem], str, str]:
        """The bundled fixture's problems, name and version."""
        return data.fixture_problems(), data.FIXTURE_NAME, data.FIXTURE_VERSION

    def read_file(self, path: Path) -> tuple[list[Problem], str, str]:
        """A ``--dataset`` file's problems, name and version."""
        return data.read_lcb_file(path)

    async def load(self, *, mode: Mode) -> Dataset:
        if self.dataset_path is None:
            problems, name, version = self.fixture()
            return dataset_of(name, version, problems, self.params)
        path = Path(self.dataset_path)
        if mode == "replay":
            raise ConfigError(
                f"--dataset {path}: llm-mock replays the bundled pre-scored {self.label} "
                "fixture, which is not for this dataset; score samples with aioeval score"
            )
        problems, name, version = self.read_file(path)
        if mode == "reference":
            require_references(path, problems, "canonical_solution", runs="reference solutions")
        return dataset_of(name, version, problems, self.params)

    def prompt(self, problem: Problem) -> Prompt:
        user = user_prompt(problem)
        return Prompt(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            text=f"{SYSTEM}\n\n{user}",
        )

    def take(self, problem: Problem, raw: str) -> Taken:
        return targets.take(raw, targets.livecodebench(problem))

    def reference(self, problem: Problem) -> str:
        return f"```python\n{problem.fields['canonical_solution']}\n```"

    async def judge(self, problem: Problem, text: str, pool: Executor) -> tuple[Verdict, Execution]:
        if self.scoring == "official":
            out = await pool.execute(self.build_program(problem, text))
        elif self.limits.partial_credit:
            tag = lcb_tally.new_tag()
            verdict, execution = verdict_from_outcome(
                await pool.execute(self.checked_task(problem, text, tag))
            )
            return lcb_tally.tallied(verdict, tag, _tests(problem.fields["tests"])), execution
        else:
            out = await pool.execute(self.checked_task(problem, text))
        return verdict_from_outcome(out)

    def mock_records(self) -> list[MockRecord]:
        return fixture_records(MOCK_FIXTURE)

    def read_samples(self, path: Path, dataset: Dataset) -> Iterator[Candidate]:
        """Code to run as it is: upstream's custom-evaluation file (a JSON
        list of ``{"question_id", "code_list"}``), or JSONL lines of that
        shape or of ``{"task_id", "completion"}``."""
        return iter(read_lcb_samples(path, {p.id for p in dataset.problems}))


def _rows(path: Path) -> Iterator[tuple[int, _Line]]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read samples: {exc.strerror}") from None
    if raw.lstrip()[:1] == b"[":
        try:
            yield from enumerate(msgspec.json.decode(raw, type=list[_Line]), 1)
        except msgspec.DecodeError as exc:
            raise InputError(f"{path}: {exc}") from None
        return
    decoder = msgspec.json.Decoder(_Line)
    for lineno, line in enumerate(raw.splitlines(), 1):
        if line.strip():
            try:
                yield lineno, decoder.decode(line)
            except msgspec.DecodeError as exc:
                raise InputError(f"{path}:{lineno}: {exc}") from None


def read_lcb_samples(path: Path, known: set[str]) -> list[Candidate]:
    """Candidates in file order; a problem's samples are indexed from 0."""
    seen: dict[str, int] = {}
    out: list[Candidate] = []
    for number, row in _rows(path):
        pid = row.question_id if row.question_id is not None else row.task_id
        codes = row.code_list if row.code_list is not None else [row.completion]
        if pid is None or any(c is None for c in codes):
            raise InputError(
                f"{path}:{number}: expected question_id with code_list, or task_id with completion"
            )
        if pid not in known:
            raise InputError(f"{path}:{number}: unknown question_id {pid!r}")
        for code in codes:
            assert code is not None
            index = seen[pid] = seen.get(pid, -1) + 1
            out.append(Candidate(problem_id=pid, sample_index=index, raw=code, text=code))
    if not out:
        raise InputError(f"{path}: no samples found")
    return out
