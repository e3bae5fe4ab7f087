"""``scoring: both``: each answer is scored strict and official in one run;
the result keeps strict's verdict with the single program's beside it, and
the summary and the report count the answers the two judged differently."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from scored import read_results

import aioeval
from aioeval.errors import ConfigError
from aioeval.reporting.facts import both_rows
from aioeval.types import Summary

PROMPT = 'def same(x):\n    """x"""\n'
TEST = "def check(candidate):\n    assert candidate(3) == 3\n"
FORGED = (
    "    class Yes:\n        def __eq__(self, other):\n            return True\n"
    "        __hash__ = None\n    return Yes()\n"
)


def _run(tmp: Path, benchmark: str = "human-eval") -> Summary:
    problems = [{"task_id": "same", "prompt": PROMPT, "test": TEST, "entry_point": "same"}]
    (tmp / "problems.jsonl").write_text("".join(json.dumps(p) + "\n" for p in problems))
    answers = ["    return x\n", "    return x + 1\n", FORGED]
    samples = [{"task_id": "same", "completion": a} for a in answers]
    (tmp / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    cfg = aioeval.load_config(
        overrides=[
            "params.scoring=both",
            "params.dedup=false",
            f"params.dataset_path={tmp / 'problems.jsonl'}",
        ]
    )
    spec = aioeval.RunSpec(
        benchmark=benchmark, config=cfg, samples=str(tmp / "samples.jsonl"), out_dir=str(tmp / "o")
    )
    return anyio.run(lambda: aioeval.evaluate(spec))


def test_each_answer_is_judged_both_ways_and_disagreements_are_counted(tmp_path: Path) -> None:
    summary = _run(tmp_path)
    assert summary.complete and summary.scoring == "both"
    rows = read_results(tmp_path / "o")
    got = {r.sample_index: r for r in rows}
    assert (got[0].status, got[0].official_status) == ("passed", "passed")
    assert (got[1].status, got[1].official_status) == ("failed", "failed")
    assert (got[2].status, got[2].official_status) == ("failed", "passed")
    assert "strict scoring: the test asked for ==" in got[2].reason
    assert summary.disagreements == 1
    on_disk = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert on_disk["disagreements"] == 1
    assert "1 of 3 answers judged differently" in both_rows(summary)[0].text


def test_a_suite_that_cannot_score_both_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="scoring=both"):
        _run(tmp_path, benchmark="mbpp")
