"""MBPP-style problems: the bundled fixture or a local JSONL file, checked
line by line, and what each problem's asserts need from the candidate.

One JSON object per line: ``task_id`` (int or str), ``text`` (the task),
``code`` (the reference solution; needed only to run it), ``test_list``
(assert statements), and optionally ``test_setup_code`` and
``challenge_test_list``; other keys are ignored. The lists are kept in the
problem's fields as JSON text, so the digest covers them exactly.

A bad line is refused when the file is read, with its file, line and field,
so a dataset mistake never turns into a model's failures half-way through a run.
"""

from __future__ import annotations

import ast
import builtins
import functools
import sys
from pathlib import Path

import msgspec
import orjson

from aioeval.errors import InputError
from aioeval.types import Problem

from ..base import fixture_problems as bundled
from ..base import jsonl_rows, read_problems_file

FIXTURE = "mbpp/problems.jsonl"
FIXTURE_NAME = "mbpp-fixture"
FIXTURE_VERSION = "aioeval-fixture-1"

_BUILTINS = frozenset(dir(builtins))
_STDLIB = frozenset(sys.stdlib_module_names)


class _Row(msgspec.Struct):
    task_id: int | str
    text: str
    test_list: list[str]
    code: str = ""
    test_setup_code: str = ""
    challenge_test_list: list[str] = []


class TestPlan(msgspec.Struct, frozen=True):
    """What the asserts use: ``functions`` the candidate must define (names
    the asserts read that nothing else binds) and standard ``modules`` they
    reach through attributes (``math.isclose``), imported for the test."""

    functions: tuple[str, ...]
    modules: tuple[str, ...]


def _bound(tree: ast.AST) -> set[str]:
    """Names a piece of code binds anywhere in it (assignments, loop and
    comprehension targets, parameters, defs, classes, imports)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _parse(source: str, field: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"{field}: not valid Python: {exc.msg} (line {exc.lineno})") from None


def _defines(code: str) -> set[str]:
    """Functions and classes the reference code defines at its top level
    (none when it does not parse: only a reference run needs it to)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return {node.name for node in tree.body if isinstance(node, kinds)}


@functools.lru_cache(maxsize=4096)
def plan_tests(tests: tuple[str, ...], setup: str, code: str = "") -> TestPlan:
    """The `TestPlan` of a problem's asserts; ValueError names the field at
    fault. A builtin's name that the reference ``code`` defines (a task
    whose function is called ``max``) is the solution's, not the builtin."""
    if not tests:
        raise ValueError("test_list: no tests")
    trees = [_parse(t, f"test_list[{i}]") for i, t in enumerate(tests)]
    taken = _bound(_parse(setup, "test_setup_code")) | (_BUILTINS - _defines(code))
    for tree in trees:
        taken |= _bound(tree)
    modules: set[str] = set()
    functions: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id in _STDLIB and node.value.id not in taken:
                    modules.add(node.value.id)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id not in taken and node.id not in modules:
                    functions.add(node.id)
    if not functions:
        raise ValueError("test_list: the asserts use no name the solution could define")
    return TestPlan(functions=tuple(sorted(functions)), modules=tuple(sorted(modules)))


def tests_of(problem: Problem, field: str = "test_list") -> tuple[str, ...]:
    return tuple(orjson.loads(problem.fields[field]))


def _problem(row: _Row) -> Problem:
    for i, test in enumerate(row.challenge_test_list):
        _parse(test, f"challenge_test_list[{i}]")
    plan_tests(tuple(row.test_list), row.test_setup_code, row.code)
    return Problem(
        id=str(row.task_id),
        fields={
            "text": row.text,
            "code": row.code,
            "test_setup_code": row.test_setup_code,
            "test_list": orjson.dumps(row.test_list).decode(),
            "challenge_test_list": orjson.dumps(row.challenge_test_list).decode(),
        },
    )


def parse_mbpp(data: bytes, source: str) -> list[Problem]:
    """Problems from JSONL bytes; a bad line is an error naming ``source:line``
    and the field."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for lineno, row in jsonl_rows(data.splitlines(), source, msgspec.json.Decoder(_Row)):
        try:
            problem = _problem(row)
        except ValueError as exc:
            raise InputError(f"{source}:{lineno}: {exc}") from None
        if problem.id in seen:
            raise InputError(f"{source}:{lineno}: task_id: {problem.id!r} appears twice")
        seen.add(problem.id)
        problems.append(problem)
    if not problems:
        raise InputError(f"{source}: no problems in it")
    return problems


def read_mbpp_file(path: Path) -> tuple[list[Problem], str, str]:
    """(problems, dataset name, version) of an MBPP-format file."""
    return read_problems_file(path, parse_mbpp, (".jsonl", ".json"))


def fixture_problems() -> list[Problem]:
    return bundled(FIXTURE, parse_mbpp)
