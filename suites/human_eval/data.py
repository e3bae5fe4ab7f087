"""Datasets in HumanEval's format: one JSON object per line with
``task_id``, ``prompt``, ``test`` and ``entry_point`` (``canonical_solution``
optional), plain or gzipped. HumanEval+, MultiPL-E's Python split or a
team's own tasks run with ``aioeval ... --benchmark human-eval --dataset FILE``
under the file's own name, version (its sha256) and digest.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from aioeval.errors import InputError
from aioeval.types import Problem

from ..base import defines_function, jsonl_rows, read_problems_file


class _Row(msgspec.Struct):
    task_id: str
    prompt: str
    entry_point: str
    test: str = ""
    canonical_solution: str = ""
    plus_input: object = None
    """EvalPlus's extra inputs: a file that has them is not HumanEval format."""


def _check_test(row: _Row, where: str) -> None:
    """A row the HumanEval model cannot score is refused, naming it: an
    EvalPlus row (its plus inputs would be ignored and the figure reported
    under the file's name), a test that is empty, does not compile or
    defines no ``check`` (every answer would fail)."""
    if row.plus_input is not None:
        raise InputError(
            f"{where}: task {row.task_id!r} carries plus_input: this is an EvalPlus file "
            "(HumanEval format would run only its base tests); score it with "
            "--benchmark humaneval-plus (or mbpp-plus for MBPP+)"
        )
    if not row.test.strip():
        raise InputError(f"{where}: task {row.task_id!r} has no test (field test is empty)")
    defines = defines_function(row.test, "check")
    if defines is None:
        raise InputError(f"{where}: task {row.task_id!r}: its test does not compile")
    if not defines:
        raise InputError(
            f"{where}: task {row.task_id!r}: its test defines no check(candidate) function"
        )


def parse_humaneval(data: bytes, source: str) -> list[Problem]:
    """Problems from JSONL bytes; a bad line is an error naming ``source:line``."""
    decoder = msgspec.json.Decoder(_Row)
    problems: list[Problem] = []
    seen: set[str] = set()
    for lineno, row in jsonl_rows(data.splitlines(), source, decoder):
        if row.task_id in seen:
            raise InputError(f"{source}:{lineno}: task_id {row.task_id!r} appears twice")
        if not row.entry_point.isidentifier():
            raise InputError(f"{source}:{lineno}: entry_point {row.entry_point!r} is not a name")
        _check_test(row, f"{source}:{lineno}")
        seen.add(row.task_id)
        problems.append(
            Problem(
                id=row.task_id,
                fields={
                    "prompt": row.prompt,
                    "entry_point": row.entry_point,
                    "canonical_solution": row.canonical_solution,
                    "test": row.test,
                },
            )
        )
    if not problems:
        raise InputError(f"{source}: no problems in it")
    return problems


def read_humaneval_file(path: Path) -> tuple[list[Problem], str, str]:
    """(problems, dataset name, version) of a HumanEval-format file."""
    return read_problems_file(path, parse_humaneval)
