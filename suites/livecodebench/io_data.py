"""Problems whose tests are data: an input and an expected output per test,
as the code datasets RL trainers use store them. Read here, run by the
LiveCodeBench rules (`livecodebench.checks`, `livecodebench.child`).

One JSON object per line (or one object, from a caller), with:

- a name: ``task_id``, ``problem_id``, ``question_id``, ``name`` or ``id``
  (text or an integer; the first present);
- the statement (optional, for prompts): ``question``, ``description``,
  ``question_content`` or ``prompt``; ``starter_code`` (optional);
- tests in one of these shapes (the first present):

  - ``input_output`` (APPS, TACO): an object, or its JSON text, with
    ``inputs`` and ``outputs`` lists and an optional ``fn_name``;
  - ``inputs`` and ``outputs`` lists beside an optional ``fn_name``;
  - ``public_tests``, ``private_tests``, ``generated_tests`` (CodeContests):
    each ``{"input": [...], "output": [...]}``, run in that order;
  - ``tests``: a list of ``{"input", "output"}`` (LiveCodeBench's lists;
    a ``testtype`` is ignored, ``fn_name`` says which kind the problem is);

- ``canonical_solution`` (optional): a reference program, for
  ``params.execute`` runs.

Without ``fn_name`` a test's input is the program's stdin and its output the
expected stdout (text, or a list of lines joined with newlines). With
``fn_name`` the problem is call-based: an input is the list of arguments
(or LiveCodeBench's text of one JSON value per line), an output the value
the function or ``Solution`` method returns, compared with ``==`` after a
tuple becomes a list, as LiveCodeBench compares; an input given as text is
LiveCodeBench's form, and its output is then JSON text too. (APPS's own checker also
accepts a returned value equal to the first item of an expected list; this
format does not: store the value itself.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from aioeval.errors import InputError
from aioeval.types import Problem

from ..base import fixture_problems as bundled
from ..base import jsonl_rows, read_problems_file
from .data import Test, check_tests, make_problem

FIXTURE = "io_tests/problems.jsonl"
FIXTURE_NAME = "io-tests-fixture"
FIXTURE_VERSION = "aioeval-fixture-1"
ID_FIELDS = ("task_id", "problem_id", "question_id", "name", "id")
TEXT_FIELDS = ("question", "description", "question_content", "prompt")
CONTESTS = ("public_tests", "private_tests", "generated_tests")


class _Row(msgspec.Struct):
    task_id: str | int | None = None
    problem_id: str | int | None = None
    question_id: str | int | None = None
    name: str | int | None = None
    id: str | int | None = None
    question: str | None = None
    description: str | None = None
    question_content: str | None = None
    prompt: str | None = None
    starter_code: str = ""
    canonical_solution: str = ""
    fn_name: str | None = None
    input_output: dict[str, Any] | str | None = None
    inputs: list[Any] | None = None
    outputs: list[Any] | None = None
    public_tests: dict[str, list[Any]] | None = None
    private_tests: dict[str, list[Any]] | None = None
    generated_tests: dict[str, list[Any]] | None = None
    tests: list[dict[str, Any]] | None = None


def _first(row: _Row, names: tuple[str, ...]) -> Any:
    for name in names:
        value = getattr(row, name)
        if value is not None:
            return value
    return None


def _text(value: Any, field: str) -> str:
    """A stdin test's input or output: text, or a list of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise ValueError(f"{field}: expected text or a list of lines")


def _arguments(value: Any, field: str) -> str:
    """A call's arguments as LiveCodeBench's text (one JSON value per line)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(json.dumps(arg) for arg in value)
    raise ValueError(f"{field}: expected a list of arguments")


def _pairs(inputs: Any, outputs: Any, field: str, func: str) -> list[Test]:
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise ValueError(f"{field}: inputs and outputs must be lists")
    if len(inputs) != len(outputs):
        raise ValueError(f"{field}: {len(inputs)} inputs but {len(outputs)} outputs")
    tests = []
    for number, (given, wanted) in enumerate(zip(inputs, outputs, strict=True), 1):
        where = f"{field} test {number}"
        if func and isinstance(given, str):  # LiveCodeBench's text on both sides
            tests.append(Test(input=given, output=_text(wanted, where)))
        elif func:
            tests.append(Test(input=_arguments(given, where), output=json.dumps(wanted)))
        else:
            tests.append(Test(input=_text(given, where), output=_text(wanted, where)))
    return tests


def _apps(row: _Row) -> tuple[list[Test], str]:
    spec = row.input_output
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except ValueError:
            raise ValueError("input_output: not JSON") from None
    if not isinstance(spec, dict):
        raise ValueError("input_output: expected an object with inputs and outputs")
    func = spec.get("fn_name") or row.fn_name or ""
    if not isinstance(func, str):
        raise ValueError("input_output.fn_name: expected a name")
    return _pairs(spec.get("inputs"), spec.get("outputs"), "input_output", func), func


def _tests(row: _Row) -> tuple[list[Test], str]:
    """The row's tests, in the order they run, and its function's name."""
    if row.input_output is not None:
        return _apps(row)
    func = row.fn_name or ""
    if row.inputs is not None or row.outputs is not None:
        return _pairs(row.inputs, row.outputs, "inputs", func), func
    if row.tests is not None:
        tests = []
        for number, test in enumerate(row.tests, 1):
            if "input" not in test or "output" not in test:
                raise ValueError(f"tests test {number}: expected input and output")
            tests.extend(_pairs([test["input"]], [test["output"]], f"tests test {number}", func))
        return tests, func
    found = [(name, getattr(row, name)) for name in CONTESTS if getattr(row, name) is not None]
    if not found:
        raise ValueError("no tests: give input_output, inputs/outputs, tests or public_tests")
    tests = []
    for name, part in found:
        tests.extend(_pairs(part.get("input", []), part.get("output", []), name, func))
    return tests, func


def _problem(row: _Row, pid: str) -> Problem:
    tests, func = _tests(row)
    if func and not func.isidentifier():
        raise ValueError(f"fn_name {func!r} is not a name")
    check_tests(tests, func)
    return make_problem(
        pid,
        question=_first(row, TEXT_FIELDS) or "",
        starter_code=row.starter_code,
        func_name=func,
        tests=tests,
        canonical_solution=row.canonical_solution,
    )


def parse_io(data: bytes, source: str) -> list[Problem]:
    """Problems from JSONL bytes; a bad line is an error naming
    ``source:line``, the problem and the field."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for lineno, row in jsonl_rows(data.splitlines(), source, msgspec.json.Decoder(_Row)):
        name = _first(row, ID_FIELDS)
        if name is None:
            raise InputError(f"{source}:{lineno}: no name: give one of {', '.join(ID_FIELDS)}")
        pid = str(name)
        where = f"{source}:{lineno}: problem {pid!r}"
        if pid in seen:
            raise InputError(f"{where}: appears twice")
        try:
            problems.append(_problem(row, pid))
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None
        seen.add(pid)
    if not problems:
        raise InputError(f"{source}: no problems in it")
    return problems


def read_io_file(path: Path) -> tuple[list[Problem], str, str]:
    """(problems, dataset name, version) of a dataset file (plain or gzipped)."""
    return read_problems_file(path, parse_io)


def fixture_problems() -> list[Problem]:
    return bundled(FIXTURE, parse_io)
