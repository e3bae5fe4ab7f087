"""A verdict does not depend on which jobs ran before it in the slot: a
test that changes its process's state (the decimal context, the recursion
limit, the int digit limit, a module's attribute, the working directory,
the environment, a builtin, a file, a thread it leaves running, the
``random`` state) leaves the next check as it found it. Each case runs an
honest problem alone, then a problem whose test makes the change, then the
honest problem again, in one slot in that order, through the real engine;
the honest answer must be judged the same both times."""

from __future__ import annotations

from pathlib import Path

import pytest
from scored import score, write_set

from aioeval.sandbox.protocol import RANDOM_SEED
from aioeval.types import CandidateResult

# name: (the honest problem's test, its entry, its answer, the changing test's setup)
CASES: dict[str, tuple[str, str, str, str]] = {
    "the decimal context": (
        "def check(candidate):\n    assert str(candidate(1, 3)) == '0.' + '3' * 28\n",
        "div",
        "    from decimal import Decimal\n    return Decimal(a) / Decimal(b)\n",
        "import decimal\ndecimal.getcontext().prec = 5\n",
    ),
    "the recursion limit": (
        "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n\n\n"
        "def check(candidate):\n    assert candidate(300, 1) == depth(300)\n",
        "div",
        "    return a\n",
        "import sys\nsys.setrecursionlimit(120)\n",
    ),
    "the int digit limit": (
        "def check(candidate):\n    assert candidate(7, 1) == int('7' * 2000)\n",
        "div",
        "    return int(str(a) * 2000) // b\n",
        "import sys\nsys.set_int_max_str_digits(640)\n",
    ),
    "a module's attribute": (
        "import json\ndef check(candidate):\n    assert json.dumps(candidate(4, 2)) == '2.0'\n",
        "div",
        "    return a / b\n",
        "import json\njson.dumps = lambda *a, **k: 'patched'\n",
    ),
    "the working directory": (
        "import os\ndef check(candidate):\n"
        "    assert os.path.abspath('x').endswith('x') and candidate(6, 3) == 2\n",
        "div",
        "    return a // b\n",
        "import os, tempfile\nd = tempfile.mkdtemp()\nos.chdir(d)\nos.rmdir(d)\n",
    ),
    "the environment": (
        "import os\nMODE = os.environ.get('APP_MODE', 'dev')\n\n\n"
        "def check(candidate):\n    assert candidate(MODE, 1) == 'dev'\n",
        "div",
        "    return a * b\n",
        "import os\nos.environ['APP_MODE'] = 'prod'\n",
    ),
    "a builtin": (
        "def check(candidate):\n    assert abs(candidate(-4, 2)) == 2\n",
        "div",
        "    return a // b\n",
        "import builtins\nbuiltins.abs = lambda x: 0\n",
    ),
    "a thread left running": (
        "import sys, threading\ndef check(candidate):\n"
        "    assert len(sys._current_frames()) == 1\n"  # active_count is a named measure
        "    assert threading.current_thread() is threading.main_thread()\n"
        "    out = []\n"
        "    worker = threading.Thread(target=lambda: out.append(candidate(6, 3)))\n"
        "    worker.start()\n    worker.join(30)\n    assert out == [2]\n",
        "div",
        "    return a // b\n",
        "import threading\nthreading.Thread(target=threading.Event().wait).start()\n",
    ),
    "the random module's state": (
        f"import random\ndef check(candidate):\n"
        f"    assert random.getstate() == random.Random({RANDOM_SEED}).getstate()\n"
        "    assert candidate(6, 3) == 2\n",
        "div",
        "    return a // b\n",
        "import random\nrandom.seed(7)\nrandom.random()\n",
    ),
    "a file left behind": (
        "import os\ndef check(candidate):\n"
        "    assert not os.path.exists('state.txt') and candidate(6, 3) == 2\n",
        "div",
        "    return a // b\n",
        "with open('state.txt', 'w') as f:\n    f.write('x')\n",
    ),
}
PROMPT = 'def div(a, b):\n    """a divided by b"""\n'


def _order(tmp: Path, name: str) -> dict[str, CandidateResult]:
    test, entry, answer, change = CASES[name]
    changing = change + "def check(candidate):\n    assert candidate(4, 2) == 2\n"
    problems = [
        ("honest, alone", test, answer),
        ("changes state", changing, "    return a // b\n"),
        ("honest, after", test, answer),
    ]
    rows = [
        {"task_id": t, "prompt": PROMPT, "test": body, "entry_point": entry}
        for t, body, _ in problems
    ]
    write_set(tmp, rows, [{"task_id": t, "completion": c} for t, _, c in problems])
    got = score(tmp, "strict", "params.workers=1")
    return {pid: r for (pid, _), r in got.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_a_change_one_test_makes_does_not_reach_the_next_check(tmp_path: Path, name: str) -> None:
    got = _order(tmp_path, name)
    alone, after = got["honest, alone"], got["honest, after"]
    assert alone.status == "passed", alone.reason
    order = [got[t].finished_at or 0.0 for t in ("honest, alone", "changes state", "honest, after")]
    assert order == sorted(order) and order[0] > 0
    assert got["changes state"].status == "passed", got["changes state"].reason
    assert after.status == alone.status, after.reason
