"""The trusted-verdict corpus for the MBPP-style suite: the attack programs
of ``test_trusted_verdicts`` (after a wrong function), plus tricks aimed at
the asserts' own names, through the real pipeline (samples file, sandbox,
verifier). Strict scoring is never fooled; the official single program is
shown fooled where it is, as documented.

Run inside the safety net (``tests/safety_net.sh``), as CI does.
"""

from __future__ import annotations

import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from test_trusted_verdicts import ATTACKS, assert_no_attack_passed, score_samples

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Limits, Program
from aioeval.suites.mbpp import data as mbpp_data
from aioeval.types import CandidateResult, Summary

PROBLEMS = {p.id: p for p in mbpp_data.fixture_problems()}
WRONG = "def count_vowels(s):\n    return None\n"  # problem 1, wrong
RIGHT = PROBLEMS["1"].fields["code"]

# Problem 10's asserts: set(common_items(...)) == {2, 3}; common_items(...) == [];
# sorted(common_items(...)) == ['a', 'b', 'c']. Each trick is wrong but aims
# at what the asserts do with the value, or at the names they use.
TRICKS: dict[str, str] = {
    "shadow-assert-names": textwrap.dedent(
        """
        def common_items(a, b):
            return []
        set = lambda items: {2, 3}
        sorted = lambda items: ['a', 'b', 'c']
        """
    ),
    "always-equal-value": textwrap.dedent(
        """
        class Anything(list):
            def __eq__(self, other):
                return True
            def __ne__(self, other):
                return False
            def __iter__(self):
                return iter([2, 3, 'a', 'b', 'c'])
        def common_items(a, b):
            return Anything()
        """
    ),
    "object-not-data": textwrap.dedent(
        """
        class Same:
            def __eq__(self, other):
                return True
        def common_items(a, b):
            return Same()
        """
    ),
    "hijack-dispatcher": textwrap.dedent(
        """
        def common_items(a, b):
            return None
        def _aioeval_mbpp_call(name, *args, **kwargs):
            raise SystemExit(0)
        """
    ),
    "exit-at-import": "def common_items(a, b):\n    return []\nimport os\nos._exit(0)\n",
}


def _score(
    tmp_path: Path, task_id: int, completions: dict[str, str], scoring: str, wall_s: float = 30
) -> tuple[Summary, dict[str, CandidateResult]]:
    """Score ``completions`` of one problem. The default wall-clock backstop
    is far above the 1 s CPU budget, so on a loaded 2-core machine a spinning
    candidate still reaches its budget (a timeout) instead of being stopped
    as starved (an infra_error); candidates that sleep wait for all of it."""
    return score_samples(tmp_path, "mbpp", task_id, completions, scoring, wall_s)


def test_no_attack_passes_strict_scoring(tmp_path: Path) -> None:
    completions = {
        name: WRONG + code.replace("has_close_elements(numbers, threshold)", "count_vowels(s)")
        for name, code in ATTACKS.items()
    }
    completions["honest-right"] = RIGHT
    # It sleeps after its helpers hit the memory limit: a short backstop ends it.
    sleeper = {"forge-then-oom": completions.pop("forge-then-oom")}
    summary, rows = _score(tmp_path, 1, completions, "strict")
    sleeper_summary, sleeper_rows = _score(tmp_path, 1, sleeper, "strict", wall_s=4)
    assert summary.complete and sleeper_summary.complete
    rows |= sleeper_rows
    assert len(rows) == len(ATTACKS) + 1
    assert_no_attack_passed(rows)
    assert "test 1: assert count_vowels('Hello World') == 3" in rows["always-equal"].reason


def test_tricks_on_the_asserts_fail_strict_and_fool_only_official(tmp_path: Path) -> None:
    completions = {**TRICKS, "honest-right": PROBLEMS["10"].fields["code"]}
    _summary, strict = _score(tmp_path, 10, completions, "strict")
    assert {n: r.status for n, r in strict.items() if r.status == "passed"} == {
        "honest-right": "passed"
    }
    assert "test 1: assert set(common_items" in strict["shadow-assert-names"].reason
    assert "test 1:" in strict["always-equal-value"].reason  # read as a plain list: []
    assert "Same" in strict["object-not-data"].reason
    assert strict["hijack-dispatcher"].reason == "SystemExit: 0"
    assert "ended before the check completed" in strict["exit-at-import"].reason
    summary, official = _score(tmp_path, 10, completions, "official")
    # The documented price of running the asserts in the candidate's process:
    assert official["shadow-assert-names"].status == "passed"
    assert official["exit-at-import"].status != "passed"
    assert any("can forge its verdict" in note for note in summary.notes)


def test_the_mbpp_fixtures_are_not_readable_by_a_candidate() -> None:
    """The pre-scored completions and the problems' asserts, by their real path."""
    root = resources.files("aioeval.fixtures").joinpath("mbpp")
    paths = [str(root.joinpath(name)) for name in ("problems.jsonl", "mock.jsonl")]
    assert all(Path(p).stat().st_size > 0 for p in paths)
    program = textwrap.dedent(
        f"""
        readable = []
        for path in {paths!r}:
            try:
                with open(path, "rb") as fh:
                    readable.append((path, fh.read(40)))
            except OSError:
                pass
        assert not readable, readable
        """
    )

    async def go() -> Any:
        async with LocalPool(workers=1, limits=Limits(cpu_s=5.0, wall_s=20.0)) as pool:
            return await pool.execute(Program(program=program))

    out = anyio.run(go)
    assert out.status == "passed", out
