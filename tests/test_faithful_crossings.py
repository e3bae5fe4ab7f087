"""Checks whose cost in strict scoring is the calls between the test's
process and the candidate's: an audit trail the test holds that the
candidate's decorator appends to at each of 2,500 calls is judged
within the default budget, as the single program judges it (each call
sends the trail's new entry, not the whole trail); a candidate that floods
the test's callback, or spins without calling at all, still times out, the
flood's reason naming the calls between the processes.

The figures live in ``bench/``; here only the verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from scored import score, write_set
from test_faithful import _d

from aioeval.types import CandidateResult

_AUDITED = _d(
    '''
    def audited(trail):
        """Decorator factory: each call of the decorated function appends
        (its number, its name, its args tuple, "ok", its result) to the
        list `trail`."""
    '''
)
_AUDIT_TEST = _d(
    """
    def check(candidate):
        trail = []

        @candidate(trail)
        def bump(i, step):
            return i + step

        for i in range(2500):
            assert bump(i, 1) == i + 1
        assert len(trail) == 2500 and trail[-1] == (2499, "bump", (2499, 1), "ok", 2500)
    """
)
_AUDIT_RIGHT = (
    "    def deco(fn):\n        def wrapper(*args):\n            result = fn(*args)\n"
    '            trail.append((len(trail), fn.__name__, args, "ok", result))\n'
    "            return result\n        return wrapper\n    return deco\n"
)
_AUDIT_WRONG = (
    "    def deco(fn):\n        def wrapper(*args):\n            result = fn(*args)\n"
    '            trail.append((len(trail), fn.__name__, args[:1], "ok", result))\n'
    "            return result\n        return wrapper\n    return deco\n"
)
# name: (prompt, test, entry, answer)
_ENDLESS = {
    "floods the test's callback": (
        'def drain(f):\n    """Call f until it returns True."""\n',
        "def check(candidate):\n    candidate(lambda: False)\n",
        "drain",
        "    while not f():\n        pass\n",
    ),
    "spins without a call": (
        'def spin(x):\n    """Never returns."""\n',
        "def check(candidate):\n    candidate(1)\n",
        "spin",
        "    while True:\n        x += 1\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], CandidateResult]:
    tmp: Path = tmp_path_factory.mktemp("crossings")
    problems = [
        {"task_id": "audit", "prompt": _AUDITED, "test": _AUDIT_TEST, "entry_point": "audited"}
    ]
    samples = [{"task_id": "audit", "completion": c} for c in (_AUDIT_RIGHT, _AUDIT_WRONG)]
    for name, (prompt, test, entry, answer) in _ENDLESS.items():
        problems.append({"task_id": name, "prompt": prompt, "test": test, "entry_point": entry})
        samples.append({"task_id": name, "completion": answer})
    write_set(tmp, problems, samples)
    return score(tmp, "strict")


def test_a_trail_the_candidate_appends_to_at_each_call_is_judged_within_the_budget(
    verdicts: dict[tuple[str, int], CandidateResult],
) -> None:
    assert verdicts[("audit", 0)].status == "passed", verdicts[("audit", 0)].reason
    assert verdicts[("audit", 1)].status == "failed", verdicts[("audit", 1)].reason


def test_a_flood_of_callbacks_times_out_naming_the_calls_between_the_processes(
    verdicts: dict[tuple[str, int], CandidateResult],
) -> None:
    got = verdicts[("floods the test's callback", 0)]
    assert got.status == "timeout", got
    assert "calls between the processes" in got.reason, got.reason


def test_a_candidate_that_spins_without_a_call_gets_no_allowance(
    verdicts: dict[tuple[str, int], CandidateResult],
) -> None:
    got = verdicts[("spins without a call", 0)]
    assert got.status == "timeout" and "CPU budget of 3s exceeded" in got.reason, got
    assert "calls between the processes" not in got.reason
