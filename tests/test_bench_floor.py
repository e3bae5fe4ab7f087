"""`bench/floor.py`: each answer's own work over its inputs, in a fresh
interpreter, stopping at its first exception or stall as first-failure
scoring does, in each of the three call shapes the benches use."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if not (BENCH / "floor.py").is_file():
    pytest.skip("bench/ is not beside the tests (an installed copy)", allow_module_level=True)
sys.path.insert(0, str(BENCH))

import floor  # noqa: E402

RAISES_ON_TWO = "def f(x):\n    if x == 2:\n        raise ValueError(x)\n    return x\n"
STALLS_ON_TWO = "import time\ndef f(x):\n    if x == 2:\n        time.sleep(60)\n    return x\n"


def call(code: str, inputs: list[list[int]]) -> dict[str, object]:
    return {"mode": "call", "code": code, "entry": "f", "inputs": inputs}


def test_an_answer_stops_at_its_first_exception() -> None:
    out = floor.measure([call(RAISES_ON_TWO, [[1], [2], [3], [4]])], 5.0)
    assert out["inputs"] == 2
    assert out["stalled_s"] == 0


def test_a_stall_costs_the_limit_and_ends_the_answer() -> None:
    out = floor.measure([call(STALLS_ON_TWO, [[1], [2], [3]]), call(RAISES_ON_TWO, [[1]])], 0.2)
    assert out["inputs"] == 3  # 1, 2 (stalls), then the second answer's one input
    assert out["stalled_s"] >= 0.2


def test_stdin_and_method_answers_run_every_input() -> None:
    stdin = {
        "mode": "stdin",
        "code": "import sys\nn = int(input())\nprint(n * 2)\nsys.exit(0)\n",
        "entry": "",
        "inputs": ["1\n", "2\n", "3\n"],
    }
    method = {
        "mode": "method",
        "code": "class Solution:\n    def add(self, a, b):\n        return a + b\n",
        "entry": "add",
        "inputs": ["1\n2", "[1]\n[2]"],
    }
    assert floor.measure([stdin, method], 5.0)["inputs"] == 5


def test_the_floor_spreads_the_work_over_the_workers() -> None:
    got = floor.floor({"cpu_s": 3.0, "stalled_s": 1.0, "inputs": 7}, 2, 10.0)
    assert (got["floor_wall_s"], got["best_ratio"]) == (2.0, 5.0)
