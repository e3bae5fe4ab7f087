"""The ``io-tests`` suite (`aioeval.suites.livecodebench.io_data`, `io_tests`): each test
shape the code datasets use, read into LiveCodeBench's tests; refused with
one line naming the field; judged as batch runs (``aioeval score`` on the
bundled fixture) and as a caller's problem in the real `Scorer`."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import anyio
import pytest
from servecheck import config

from aioeval.errors import InputError
from aioeval.service import Scorer
from aioeval.suites.livecodebench import data as lcb_data
from aioeval.suites.livecodebench.io_data import parse_io

STDIN_SUM = "print(sum(map(int, input().split())))\n"


def _one(row: dict[str, object]) -> list[tuple[str, str]]:
    (problem,) = parse_io(json.dumps(row).encode(), "row")
    return lcb_data.tests_of(problem)


def test_every_shape_becomes_the_same_tests() -> None:
    apps = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}
    want = [("1 2\n", "3\n"), ("3 4\n", "7\n")]
    assert _one({"problem_id": 7, "input_output": json.dumps(apps)}) == want
    assert _one({"id": "a", "input_output": apps}) == want
    assert _one({"id": "a", **apps}) == want
    contests = {
        "name": "c",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "generated_tests": {"input": ["3 4\n"], "output": ["7\n"]},
    }
    assert _one(contests) == want
    listed = [{"input": i, "output": o, "testtype": "stdin"} for i, o in want]
    assert _one({"question_id": "q", "tests": listed}) == want
    lines = _one({"id": "l", "inputs": [["1 2", "x"]], "outputs": [["3", "y"]]})
    assert lines == [("1 2\nx", "3\ny")]


def test_call_based_arguments_become_one_json_value_per_line() -> None:
    tests = _one({"id": "f", "fn_name": "f", "inputs": [[[1, 2], "a"]], "outputs": [[1]]})
    assert tests == [('[1, 2]\n"a"', "[1]")]
    text = _one({"id": "f", "fn_name": "f", "tests": [{"input": "[1]\n2", "output": "3"}]})
    assert text == [("[1]\n2", "3")]


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"inputs": ["1"], "outputs": ["1"]}, "no name"),
        ({"id": "x"}, "no tests"),
        ({"id": "x", "inputs": ["1", "2"], "outputs": ["1"]}, "2 inputs but 1 outputs"),
        ({"id": "x", "input_output": "{"}, "input_output: not JSON"),
        ({"id": "x", "inputs": [1], "outputs": ["1"]}, "inputs test 1"),
        ({"id": "x", "fn_name": "a b", "inputs": [[1]], "outputs": [1]}, "fn_name"),
        ({"id": "x", "inputs": ["1"], "outputs": ["1"], "starter_code": 3}, "starter_code"),
        ({"id": "x", "tests": [{"input": "1"}]}, "tests test 1"),
    ],
)
def test_a_bad_row_is_one_line_naming_its_field(row: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_io(json.dumps(row).encode(), "data.jsonl")
    message = str(caught.value)
    assert field in message and "\n" not in message and message.startswith("data.jsonl:1")


def test_aioeval_score_judges_the_fixture_as_it_was_scored(tmp_path: Path) -> None:
    """The bundled mock answers, run through the sandbox, get their recorded statuses."""
    mock = resources.files("aioeval.fixtures").joinpath("io_tests/mock.jsonl").read_text()
    rows = [json.loads(line) for line in mock.splitlines()]
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"task_id": r["problem_id"], "completion": r["completion"]}) + "\n"
            for r in rows
        )
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "aioeval", "score", "--benchmark", "io-tests"]
    done = subprocess.run(
        [*cmd, "--samples", str(samples), "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]

    def statuses(results: list[dict[str, str]]) -> list[tuple[str, int, str]]:
        return sorted((r["problem_id"], r["sample_index"], r["status"]) for r in results)

    assert statuses(got) == statuses(rows)


@pytest.mark.anyio
async def test_a_callers_stdin_and_call_based_problems_are_judged() -> None:
    stdin = {"task_id": "sum", "inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]}
    call = {
        "problem_id": 3,
        "starter_code": "class Solution:\n    def twice(self, x):\n",
        "input_output": {"fn_name": "twice", "inputs": [[1], [4]], "outputs": [2, 8]},
    }
    twice = "```python\nclass Solution:\n    def twice(self, x):\n        return x * 2\n```"
    async with Scorer(config()) as scorer:
        assert (
            await scorer.score("io-tests", stdin, f"```python\n{STDIN_SUM}```")
        ).status == "passed"
        wrong = await scorer.score("io-tests", stdin, "```python\nprint(3)\n```")
        assert wrong.status == "failed" and "test 2" in wrong.reason
        right = await scorer.score("io-tests", call, twice)
        assert right.status == "passed" and right.problem_id.startswith("3@"), right.reason
        with pytest.raises(InputError, match="outputs"):
            await scorer.score("io-tests", {**stdin, "outputs": ["3\n"]}, "x")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_score_many_keeps_every_slot_busy() -> None:
    """A trainer's batch over callers' problems fills both slots at once."""
    slow = "```python\nimport time\ntime.sleep(0.5)\n" + STDIN_SUM + "# {}\n```"
    problem = {"task_id": "sum", "inputs": ["1 2\n"], "outputs": ["3\n"]}
    items = [("io-tests", problem, slow.format(i)) for i in range(6)]
    async with Scorer(config("params.workers=2")) as scorer:
        assert scorer.slots == 2
        most = 0

        async def watch() -> None:
            nonlocal most
            while most < 2:
                most = max(most, scorer.in_flight)
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            statuses = [r.status async for r in scorer.score_many(items)]
            tg.cancel_scope.cancel()
        assert statuses == ["passed"] * 6
        assert most == 2
