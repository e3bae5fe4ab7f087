from __future__ import annotations

import json
from pathlib import Path

import anyio
import orjson
import pytest

from aioeval.config import Params
from aioeval.errors import InputError
from aioeval.suites import get_suite
from aioeval.suites.base import unwrap_fence
from aioeval.suites.human_eval.suite import build_program, load_problems


def test_all_164_problems_load() -> None:
    problems = load_problems()
    assert len(problems) == 164
    assert problems[0].id == "HumanEval/0"
    assert {"prompt", "test", "entry_point", "canonical_solution"} <= set(problems[0].fields)


def test_program_is_the_official_one() -> None:
    p = load_problems()[0]
    program = build_program(p, "    return True\n")
    f = p.fields
    assert (
        program
        == f["prompt"]
        + "    return True\n"
        + "\n"
        + f["test"]
        + "\n"
        + f"check({f['entry_point']})"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("    return 1\n", "    return 1\n"),
        ("Here you go:\n```python\ndef f():\n    return 1\n```\nDone.", "def f():\n    return 1"),
        ("```\nx = 1\n```", "x = 1"),
        (
            "```python\na\n```\n```python\nb\n```",
            "```python\na\n```\n```python\nb\n```",
        ),  # ambiguous: untouched
        ("```python\nunterminated = 1\n", "unterminated = 1\n"),
    ],
)
def test_unwrap_fence(raw: str, expected: str) -> None:
    assert unwrap_fence(raw) == expected


def test_limit_and_digest() -> None:
    full = anyio.run(lambda: get_suite("human-eval").load(mode="reference"))
    five = anyio.run(lambda: get_suite("human-eval", Params(limit=5)).load(mode="reference"))
    assert full.size == 164 and five.size == 5
    assert full.digest != five.digest
    again = anyio.run(lambda: get_suite("human-eval", Params(limit=5)).load(mode="reference"))
    assert again.digest == five.digest


def test_fixture_is_a_subset_with_failures() -> None:
    suite = get_suite("human-eval")
    records = suite.mock_records()
    assert len(records) >= 10
    statuses = {r.status for r in records}
    assert "passed" in statuses and statuses - {"passed"}


def _samples(tmp_path: Path, rows: list[object]) -> Path:
    p = tmp_path / "samples.jsonl"
    p.write_bytes(
        b"".join((orjson.dumps(r) if not isinstance(r, bytes) else r) + b"\n" for r in rows)
    )
    return p


def test_read_samples_indexes_per_task(tmp_path: Path) -> None:
    suite = get_suite("human-eval")
    ds = anyio.run(lambda: suite.load(mode="score"))
    path = _samples(
        tmp_path,
        [
            {"task_id": "HumanEval/1", "completion": "a", "extra": 1},
            {"task_id": "HumanEval/0", "completion": "b"},
            {"task_id": "HumanEval/1", "completion": "c"},
        ],
    )
    got = [(c.problem_id, c.sample_index, c.text) for c in suite.read_samples(path, ds)]
    assert got == [("HumanEval/1", 0, "a"), ("HumanEval/0", 0, "b"), ("HumanEval/1", 1, "c")]


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (b"{not json", ":2: "),
        (b'{"task_id": "HumanEval/0"}', "missing required field `completion`"),
        (b'{"task_id": "HumanEval/999", "completion": "x"}', "unknown task_id 'HumanEval/999'"),
        (b'{"task_id": 3, "completion": "x"}', "$.task_id"),
    ],
)
def test_bad_samples_name_file_and_line(tmp_path: Path, line: bytes, fragment: str) -> None:
    suite = get_suite("human-eval")
    ds = anyio.run(lambda: suite.load(mode="score"))
    path = _samples(tmp_path, [{"task_id": "HumanEval/0", "completion": "x"}, line])
    with pytest.raises(InputError) as info:
        list(suite.read_samples(path, ds))
    assert f"{path}:2" in str(info.value) and fragment in str(info.value)


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        (
            {"prompt": "def f(x):\n", "entry_point": "f", "base_input": [[1]], "plus_input": [[2]]},
            "carries plus_input: this is an EvalPlus file",
        ),
        (
            {"prompt": "def f(x):\n", "entry_point": "f", "test": "", "plus_input": [[2]]},
            "carries plus_input",
        ),
        ({"prompt": "def f(x):\n", "entry_point": "f", "test": "  \n"}, "has no test"),
        ({"prompt": "def f(x):\n", "entry_point": "f"}, "has no test"),
        ({"prompt": "def f(x):\n", "entry_point": "f", "test": "def check(c:\n"}, "not compile"),
        (
            {"prompt": "def f(x):\n", "entry_point": "f", "test": "assert f(1) == 1\n"},
            "defines no check(candidate)",
        ),
    ],
)
def test_a_row_the_humaneval_model_cannot_score_is_refused(
    tmp_path: Path, row: dict[str, object], fragment: str
) -> None:
    """Named by file, line and task, instead of every answer failing (or an
    EvalPlus file scored on its base tests under its own name)."""
    from aioeval.errors import InputError
    from aioeval.suites.human_eval.data import read_humaneval_file

    path = tmp_path / "tasks.jsonl"
    good = {"task_id": "T/0", "prompt": "def g():\n", "entry_point": "g"}
    good["test"] = "def check(candidate):\n    assert candidate() is None\n"
    path.write_text(json.dumps(good) + "\n" + json.dumps({"task_id": "T/1", **row}) + "\n")
    with pytest.raises(InputError) as info:
        read_humaneval_file(path)
    message = str(info.value)
    assert f"{path}:2: task 'T/1'" in message and fragment in message
    assert "\n" not in message
