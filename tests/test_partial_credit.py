"""Per-test detail (``detail`` / ``params.livecodebench.partial_credit``,
`aioeval.suites.livecodebench.tally`): tests passed of all and the first failing test,
counted by the verifier; the verdict and its reason are the default's; no
reason the candidate writes passes for a tally. Through the real `Scorer`,
a real server on 127.0.0.1 and ``aioeval score``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from servecheck import config, post, serving

from aioeval.service import Scorer

pytestmark = pytest.mark.anyio

ADD = {
    "task_id": "add",
    "fn_name": "add_up",
    "inputs": [[1, 2], [3, 4], [-1, 1], [10**12, 1]],
    "outputs": [3, 7, 0, 10**12 + 1],
}
SUMS = {"task_id": "sum", "inputs": ["1 2\n", "3 4\n", "5 5\n"], "outputs": ["3\n", "7\n", "10\n"]}


def _code(text: str) -> str:
    return f"```python\n{text}```"


SMALL_ONLY = _code("def add_up(a, b):\n    return a + b if a < 5 else 0\n")
RIGHT = _code("def add_up(a, b):\n    return a + b\n")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_detail_counts_the_tests_and_keeps_the_verdict() -> None:
    async with Scorer(config()) as scorer:
        plain = await scorer.score("io-tests", ADD, SMALL_ONLY)
        detailed = await scorer.score("io-tests", ADD, SMALL_ONLY, detail=True)
        assert plain.tests_passed is None and plain.first_failing is None
        assert (
            (detailed.status, detailed.reason)
            == (plain.status, plain.reason)
            == (
                "failed",
                plain.reason,
            )
        )
        assert plain.reason.startswith("WrongAnswer: test 4")
        assert (detailed.tests_passed, detailed.tests_total) == (3, 4)
        failing = detailed.first_failing
        assert failing is not None and failing.index == 3
        assert (failing.input, failing.expected) == ("1000000000000\n1", "1000000000001")
        right = await scorer.score("io-tests", ADD, RIGHT, detail=True)
        assert right.status == "passed" and (right.tests_passed, right.tests_total) == (4, 4)
        assert right.first_failing is None


async def test_a_first_failure_then_a_stall_counts_and_stays_failed() -> None:
    stall = _code(
        "a, b = map(int, input().split())\nprint(0 if a == 1 else a + b)\nif a == 5:\n    while True: pass\n"
    )
    async with Scorer(config("params.livecodebench.test_timeout_s=1")) as scorer:
        plain = await scorer.score("io-tests", SUMS, stall)
        detailed = await scorer.score("io-tests", SUMS, stall, detail=True)
        assert plain.status == detailed.status == "failed", detailed.reason
        assert (detailed.tests_passed, detailed.tests_total) == (1, 3)
        assert detailed.first_failing is not None and detailed.first_failing.index == 0
        # A first failure that is a time limit is the answer's timeout, as without detail.
        slow = _code("while True: pass\n")
        timed = await scorer.score("io-tests", SUMS, slow, detail=True)
        assert timed.status == "timeout" and timed.tests_passed is None


async def test_a_reason_the_candidate_writes_is_never_a_tally() -> None:
    forged = [
        "class Tally(Exception):\n    pass\nraise Tally('x 3 1\\nok')\n",
        "import sys\nsys.stdout.write('Tally: x 3 1\\n')\nraise AssertionError('Tally: x 2 1')\n",
    ]
    async with Scorer(config()) as scorer:
        for code in forged:
            result = await scorer.score("io-tests", SUMS, _code(code), detail=True)
            assert result.status == "failed"
            assert result.tests_passed == 0, result
            assert "Tally" not in result.reason.split(":")[0] or result.reason.startswith(
                "Tally: x"
            )


async def test_serve_gives_detail_when_asked() -> None:
    async with serving() as (url, _service):
        item = {"benchmark": "io-tests", "problem": ADD, "completion": SMALL_ONLY, "detail": True}
        status, row = await post(url, item)
        assert status == 200 and row["tests_passed"] == 3 and row["tests_total"] == 4, row
        assert row["first_failing"]["index"] == 3
        status, row = await post(url, {**item, "detail": False})
        assert status == 200 and row["tests_passed"] is None


def test_a_batch_run_counts_with_partial_credit(tmp_path: Path) -> None:
    dataset = tmp_path / "sums.jsonl"
    dataset.write_text(json.dumps(SUMS) + "\n")
    samples = tmp_path / "samples.jsonl"
    answers = ["print(3)\n", "a, b = map(int, input().split())\nprint(a + b)\n"]
    samples.write_text(
        "".join(json.dumps({"task_id": "sum", "completion": a}) + "\n" for a in answers)
    )
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "aioeval",
        "score",
        "--benchmark",
        "io-tests",
        "--dataset",
        str(dataset),
    ]
    cmd += [
        "--samples",
        str(samples),
        "--out",
        str(out),
        "--set",
        "params.livecodebench.partial_credit=true",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = {
        r["sample_index"]: r
        for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    assert (rows[0]["status"], rows[0]["tests_passed"], rows[0]["tests_total"]) == ("failed", 1, 3)
    assert (rows[1]["status"], rows[1]["tests_passed"]) == ("passed", 3)


async def test_detail_on_a_benchmark_whose_tests_are_code_changes_nothing() -> None:
    he = {
        "prompt": "def add(a, b):\n",
        "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    }
    async with Scorer(config()) as scorer:
        plain = await scorer.score("human-eval", he, "    return a + b\n")
        detailed = await scorer.score("human-eval", he, "    return a + b\n", detail=True)
        assert plain.status == detailed.status == "passed"
        assert detailed.tests_passed is None and detailed.cached  # one verdict, shared
