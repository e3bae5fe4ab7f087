"""Problems callers bring for every suite (`aioeval.service.scorer.PARSERS`):
HumanEval+, MBPP+ and LiveCodeBench rows in their own formats, judged on the
same trusted path as batch runs, refused with one line naming the field.
Through the real `Scorer` and a real server on 127.0.0.1."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from servecheck import config, post, serving

from aioeval.errors import InputError
from aioeval.service import Scorer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _row(name: str, index: int = 0) -> dict[str, Any]:
    text = resources.files("aioeval.fixtures").joinpath(name).read_text()
    row: dict[str, Any] = json.loads(text.splitlines()[index])
    return row


def _fenced(code: str) -> str:
    return f"```python\n{code}\n```\n"


@pytest.mark.parametrize(
    ("suite", "fixture"),
    [
        ("humaneval-plus", "evalplus/humaneval_plus.jsonl"),
        ("mbpp-plus", "evalplus/mbpp_plus.jsonl"),
    ],
)
async def test_an_evalplus_problem_is_judged_against_its_reference(
    suite: str, fixture: str
) -> None:
    row = _row(fixture)
    wrong = f"def {row['entry_point']}(*args):\n    return None\n"
    async with Scorer(config()) as scorer:
        reference = row["prompt"] + row["canonical_solution"]
        right = await scorer.score(suite, row, _fenced(reference))
        assert right.status == "passed", right.reason
        assert right.problem_id.startswith(row["task_id"] + "@")
        failed = await scorer.score(suite, row, _fenced(wrong))
        assert failed.status == "failed"
        with pytest.raises(InputError, match="plus_input"):
            await scorer.score(suite, {**row, "plus_input": "[1]"}, "x")
        with pytest.raises(InputError, match="entry_point"):
            await scorer.score(suite, {**row, "entry_point": "not a name"}, "x")


async def test_a_livecodebench_problem_runs_its_public_and_hidden_tests() -> None:
    row = _row("livecodebench/problems.jsonl")
    async with Scorer(config()) as scorer:
        right = await scorer.score("livecodebench", row, _fenced(row["canonical_solution"]))
        assert right.status == "passed", right.reason
        # Right on the public test only: the hidden tests decide.
        public = json.loads(row["public_test_cases"])[0]
        only_public = f"input()\nprint({public['output'].strip()!r})\n"
        failed = await scorer.score("livecodebench", row, _fenced(only_public))
        assert failed.status == "failed", failed.reason
        with pytest.raises(InputError, match="public_test_cases"):
            await scorer.score("livecodebench", {**row, "public_test_cases": "[{"}, "x")
        with pytest.raises(InputError, match="question_content"):
            await scorer.score(
                "livecodebench", {k: v for k, v in row.items() if k != "question_content"}, "x"
            )


async def test_serve_takes_every_suites_problems() -> None:
    lcb = _row("livecodebench/problems.jsonl")
    plus = _row("evalplus/humaneval_plus.jsonl")
    async with serving() as (url, _service):
        for benchmark, row, code in (
            ("livecodebench", lcb, lcb["canonical_solution"]),
            ("humaneval-plus", plus, plus["prompt"] + plus["canonical_solution"]),
        ):
            item = {"benchmark": benchmark, "problem": row, "completion": _fenced(code)}
            status, answer = await post(url, item)
            assert status == 200 and answer["status"] == "passed", answer
        bad = {"benchmark": "livecodebench", "problem": {**lcb, "metadata": "{"}, "completion": "x"}
        status, answer = await post(url, bad)
        assert status == 400 and "metadata" in answer["error"], answer


async def test_a_callers_evalplus_problem_writes_nothing_to_the_disk_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIOEVAL_CACHE_DIR", str(tmp_path))
    row = _row("evalplus/humaneval_plus.jsonl", 1)
    async with Scorer(config()) as scorer:
        right = await scorer.score(
            "humaneval-plus", row, _fenced(row["prompt"] + row["canonical_solution"])
        )
        assert right.status == "passed", right.reason
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
