"""EvalPlus-format datasets (HumanEval+ and MBPP+): read, checked line by
line, and each problem's inputs made into the values EvalPlus calls with.

One JSON object per line with ``task_id``, ``prompt``, ``entry_point``,
``canonical_solution``, ``base_input`` and ``plus_input`` (lists of argument
lists) and ``atol``; other keys (``contract``, MBPP+'s ``code``,
``test_list``, ...) are ignored. Plain or gzipped, as EvalPlus releases it.
The inputs are kept in the problem's fields as JSON text, so the digest
covers them exactly; they are data, read here and evaluated nowhere.

MBPP+ stores some inputs as JSON lists where its tasks take tuples, sets or
complex numbers, and EvalPlus turns them back per task before calling
(``evalplus/data/mbpp.py``, ``mbpp_deserialize_inputs``): `mbpp_inputs`
does the same for the same task numbers, so a candidate sees the values it
would see under EvalPlus.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec

from aioeval.errors import InputError
from aioeval.types import Problem

from ..base import fixture_problems, jsonl_rows, read_problems_file

Flavor = Literal["humaneval", "mbpp"]
FIXTURES = {"humaneval": "evalplus/humaneval_plus.jsonl", "mbpp": "evalplus/mbpp_plus.jsonl"}
FIXTURE_VERSION = "aioeval-fixture-1"


class _Row(msgspec.Struct):
    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    base_input: msgspec.Raw
    plus_input: msgspec.Raw
    atol: float = 0.0


def _argument_lists(raw: msgspec.Raw, where: str, field: str) -> str:
    """The field's JSON text, once checked to be a list of argument lists
    (read by the standard library, as EvalPlus reads it: big integers,
    ``NaN`` and ``Infinity`` included)."""
    text = bytes(raw).decode("utf-8")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{where}: {field} is not JSON: {exc}") from None
    if not isinstance(value, list) or not all(isinstance(a, list) for a in value):
        raise InputError(f"{where}: {field} must be a list of argument lists")
    return text


def parse(data: bytes, source: str) -> list[Problem]:
    """Problems from EvalPlus JSONL bytes; a bad line names ``source:line``
    and, from msgspec, the field."""
    decoder = msgspec.json.Decoder(_Row)
    problems: list[Problem] = []
    seen: set[str] = set()
    for lineno, row in jsonl_rows(data.splitlines(), source, decoder):
        where = f"{source}:{lineno}"
        if row.task_id in seen:
            raise InputError(f"{where}: task_id {row.task_id!r} appears twice")
        if not row.entry_point.isidentifier():
            raise InputError(f"{where}: entry_point {row.entry_point!r} is not a name")
        base = _argument_lists(row.base_input, where, "base_input")
        plus = _argument_lists(row.plus_input, where, "plus_input")
        if base.strip() == "[]":
            raise InputError(f"{where}: task {row.task_id!r} has no base_input")
        if row.atol < 0:
            raise InputError(f"{where}: task {row.task_id!r}: atol is negative")
        seen.add(row.task_id)
        problems.append(
            Problem(
                id=row.task_id,
                fields={
                    "prompt": row.prompt,
                    "entry_point": row.entry_point,
                    "canonical_solution": row.canonical_solution,
                    "base_input": base,
                    "plus_input": plus,
                    "atol": repr(float(row.atol)),
                },
            )
        )
    if not problems:
        raise InputError(f"{source}: no problems in it")
    return problems


def read_file(path: Path) -> tuple[list[Problem], str, str]:
    """(problems, dataset name, version) of an EvalPlus-format file."""
    return read_problems_file(path, parse)


def fixture(flavor: Flavor) -> list[Problem]:
    """The bundled problems of one flavor (written for this project)."""
    return fixture_problems(FIXTURES[flavor], parse)


def inputs(problem: Problem, part: str, flavor: Flavor) -> list[list[Any]]:
    """The argument lists of ``part`` (base or plus), as EvalPlus calls with them."""
    values: list[list[Any]] = json.loads(problem.fields[f"{part}_input"])
    if flavor == "mbpp":
        return mbpp_inputs(problem.id, values)
    return values


def _deep_tuples(x: Any) -> Any:
    return tuple(_deep_tuples(i) for i in x) if isinstance(x, list) else x


def _each_arg_tuple(inp: list[Any]) -> list[Any]:
    return [tuple(a) for a in inp]


def _nested_tuples(inp: list[Any]) -> list[Any]:
    return [[tuple(a) for a in arg] for arg in inp]


def _first_nested_rest(inp: list[Any]) -> list[Any]:
    return [[tuple(a) for a in inp[0]], *inp[1:2]]


def _second_tuple(inp: list[Any]) -> list[Any]:
    return [inp[0], tuple(inp[1])]


def _first_tuple(inp: list[Any]) -> list[Any]:
    return [tuple(inp[0]), inp[1]]


def _first_tuple_of_three(inp: list[Any]) -> list[Any]:
    return [tuple(inp[0]), inp[1], inp[2]]


def _tuple_of_tuples(inp: list[Any]) -> list[Any]:
    return [tuple(tuple(a) for a in arg) for arg in inp]


def _sets(inp: list[Any]) -> list[Any]:
    return [[set(i) if isinstance(i, list) and i else {} for i in inp[0]]]


def _mixed_tuple(inp: list[Any]) -> list[Any]:
    return [tuple(tuple(i) if isinstance(i, list) else i for i in inp[0])]


def _dict_tuples(inp: list[Any]) -> list[Any]:
    return [{k: tuple(v) for k, v in inp[0].items()}, *inp[1:]]


_BY_TASK: dict[int, Callable[[list[Any]], Any]] = {}
for _ids, _fn in (
    ((2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630,
      726, 740, 744, 809), _each_arg_tuple),
    ((63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780), _nested_tuples),
    ((75, 413, 444, 753), _first_nested_rest),
    ((106, 750), _second_tuple),
    ((250, 405, 446, 617, 720, 763, 808), _first_tuple),
    ((307,), _first_tuple_of_three),
    ((259, 401, 445), _tuple_of_tuples),
    ((115,), _sets),
    ((278,), _mixed_tuple),
    ((722,), _dict_tuples),
    ((580, 615, 791), _deep_tuples),
):  # fmt: skip
    for _id in _ids:
        _BY_TASK[_id] = _fn
_BY_TASK[124] = lambda inp: (float(inp[0]), complex(inp[1]))
_BY_TASK[252] = lambda inp: [complex(inp[0])]


def mbpp_inputs(task_id: str, values: list[list[Any]]) -> list[Any]:
    """MBPP+'s stored inputs as its tasks take them (see the module docstring)."""
    # A caller's problem is named ``Mbpp/N@digest``: the task is still N.
    head, _, number = task_id.partition("@")[0].rpartition("/")
    if head != "Mbpp" or not number.isdigit():
        return values
    fn = _BY_TASK.get(int(number))
    return values if fn is None else [fn(inp) for inp in values]
