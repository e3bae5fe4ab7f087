"""The reference's outputs on inputs past what one sandboxed call carries:
computed in parts, the answers scored as usual, and one input past the
limits refused with a line that names its task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import evalplus_fixture
import pytest

from aioeval.config import load_config
from aioeval.errors import InputError
from aioeval.sandbox.values import plain
from aioeval.suites import get_suite
from aioeval.types import Failed, Passed


def _row(body: str, base: list[Any], plus: list[Any]) -> dict[str, Any]:
    return {
        "task_id": "Big/0",
        "prompt": 'def f(n):\n    """A big value."""\n',
        "entry_point": "f",
        "canonical_solution": body,
        "base_input": base,
        "plus_input": plus,
        "atol": 0,
    }


def _judge(tmp: Path, row: dict[str, Any], answers: list[str]) -> tuple[list[str], int]:
    """The verdicts of ``answers`` and how many reference calls it took."""
    data = tmp / "big.jsonl"
    data.write_text(json.dumps(row) + "\n")
    params = load_config(None, [f"params.dataset_path={data}"]).params

    Counting = evalplus_fixture.counting_pool()

    async def run() -> list[str]:
        suite = get_suite("humaneval-plus", params)
        problem = (await suite.load(mode="score")).problems[0]
        async with Counting(workers=1) as pool:
            out = []
            for text in answers:
                verdict, _ = await suite.judge(problem, row["prompt"] + text, pool)
                out.append(type(verdict).__name__)
            return out

    return anyio.run(run), Counting.calls


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIOEVAL_CACHE_DIR", str(tmp_path / "cache"))


def test_outputs_past_the_result_cap_are_computed_in_parts(tmp_path: Path) -> None:
    """Two 3 MB outputs do not fit one call's 4 MB result: each half does."""
    row = _row("    return 'x' * n\n", [[1]], [[3 << 20], [3 << 20]])
    verdicts, calls = _judge(tmp_path, row, ["    return 'x' * n\n", "    return 'y' * n\n"])
    assert verdicts == [Passed.__name__, Failed.__name__]
    assert calls == 1 + 3  # base; plus whole, then its two halves


def test_inputs_past_the_data_limits_are_sent_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plain, "MAX_NODES", 60)  # the engine's side only
    plus = [[list(range(i, i + 20))] for i in range(4)]
    row = _row("    return sum(n)\n", [[[1, 2]]], plus)
    verdicts, calls = _judge(tmp_path, row, ["    return sum(n)\n", "    return max(n)\n"])
    assert verdicts == [Passed.__name__, Failed.__name__]
    assert calls == 1 + 2  # base; plus in two halves (the whole is never sent)


def test_one_input_past_the_limits_is_refused_by_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plain, "MAX_NODES", 60)
    row = _row("    return sum(n)\n", [[[1, 2]]], [[list(range(100))]])
    with pytest.raises(InputError, match=r"task Big/0: an input of its plus inputs is too large"):
        _judge(tmp_path, row, ["    return sum(n)\n"])
