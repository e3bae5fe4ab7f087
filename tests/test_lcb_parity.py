"""`bench/lcb_parity.py` at a tiny size: aioeval's side on its own (the
generated problems and answers load through ``aioeval score`` and every
answer gets the verdict its label gives under LiveCodeBench's rules, so the
bench's data and its comparison do not rot), and the whole bench against
upstream's evaluator when ``LCB_SOURCE`` names a LiveCodeBench checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if not (BENCH / "lcb_parity.py").is_file():
    pytest.skip("bench/ is not beside the tests (an installed copy)", allow_module_level=True)
sys.path.insert(0, str(BENCH))

import lcb_data  # noqa: E402
import lcb_parity  # noqa: E402


def test_every_kind_and_verdict_is_in_the_set() -> None:
    problems = lcb_data.make(16, 3, stall_every=8)
    assert len({p.question_id for p in problems}) == 16
    assert {p.func_name is None for p in problems} == {True, False}
    labels = [label for p in problems for _, label in p.answers]
    assert {"passed", "wrong", "error", "timeout"} <= set(labels)
    assert {len(p.answers) for p in problems} == {8}  # upstream wants as many per problem
    assert all(len(p.tests) == 3 for p in problems)
    assert lcb_data.make(16, 3, stall_every=8) == problems  # the same on every run


@pytest.mark.parametrize("scoring", ["strict", "official"])
def test_our_verdicts_are_the_labels(tmp_path: Path, scoring: str) -> None:
    problems = lcb_data.make(9, 3, stall_every=9)
    dataset, samples = lcb_parity.write_inputs(problems, tmp_path)
    ours, pass_1, _ = lcb_parity.run_ours(
        dataset, samples, tmp_path / "out", scoring=scoring, workers=2, timeout=2
    )
    wrong = [
        f"{p.question_id} #{i}: {ours[(p.question_id, i)]} for {label}"
        for p in problems
        for i, (_, label) in enumerate(p.answers)
        if not lcb_parity.same(ours[(p.question_id, i)], label, scoring)
    ]
    assert wrong == []
    passed = sum(label == "passed" for p in problems for _, label in p.answers)
    assert pass_1 == pytest.approx(passed / (8 * len(problems)))


def test_a_missing_upstream_source_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH / "lcb_parity.py"), "--lcb-source", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert proc.stderr.strip().count("\n") == 0
    assert "no LiveCodeBench source" in proc.stderr


@pytest.mark.skipif(
    not os.environ.get("LCB_SOURCE"), reason="LCB_SOURCE (a LiveCodeBench checkout) is not set"
)
def test_upstream_gives_the_same_verdicts() -> None:
    for module in ("numpy", "pandas", "tqdm"):
        pytest.importorskip(module, reason=f"upstream's evaluator imports {module}")
    flags = ["--problems", "8", "--tests", "3", "--stall-every", "8", "--timeout", "1"]
    bench = [sys.executable, str(BENCH / "lcb_parity.py"), "--lcb-source", os.environ["LCB_SOURCE"]]
    proc = subprocess.run(
        bench + flags,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["scoring"] for line in lines] == ["strict", "official"]
    for line in lines:
        assert line["answers"] == 64
        assert (line["disagreements"], line["pass_at_1"]["same"]) == (0, True), line
        floor = line["floor"]
        assert floor["inputs"] > 0 and floor["floor_wall_s"] > 0, floor
        ratio = line["wall_s"]["theirs"] / floor["floor_wall_s"]  # from rounded walls
        assert floor["best_ratio"] == pytest.approx(ratio, rel=0.02)
