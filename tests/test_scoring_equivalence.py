"""On honest candidates the strict and the official HumanEval scoring models
give identical verdicts: the 164 canonical solutions and ~1,800 honest but
wrong completions (see ``honest_corpus``), scored both ways through the real
pipeline and sandbox."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import anyio
import pytest
from honest_corpus import corpus
from scored import read_results

import aioeval
from aioeval.suites.human_eval.suite import load_problems
from aioeval.types import CandidateResult

pytestmark = pytest.mark.slow


def _score(samples: Path, out: Path, scoring: str) -> dict[tuple[str, int], CandidateResult]:
    cfg = aioeval.load_config(
        overrides=[f"params.scoring={scoring}", "params.timeout_s=1", "params.dedup=false"]
    )
    spec = aioeval.RunSpec(
        benchmark="human-eval", config=cfg, samples=str(samples), out_dir=str(out)
    )
    summary = anyio.run(lambda: aioeval.evaluate(spec))
    assert summary.complete and summary.scoring == scoring
    rows = read_results(out)
    return {(r.problem_id, r.sample_index): r for r in rows}


def test_strict_and_official_agree_on_honest_candidates(tmp_path: Path) -> None:
    rows = corpus(load_problems())
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(json.dumps({"task_id": t, "completion": c}) + "\n" for t, _, c in rows)
    )
    strict = _score(samples, tmp_path / "strict", "strict")
    official = _score(samples, tmp_path / "official", "official")
    assert len(strict) == len(official) == len(rows) >= 1000 + 164
    differ = {
        k: (official[k].status, strict[k].status)
        for k in official
        if official[k].status != strict[k].status
    }
    assert differ == {}
    # The corpus exercises every verdict a check can give, and every
    # canonical solution passes in both models.
    assert set(collections.Counter(r.status for r in strict.values())) == {
        "passed",
        "failed",
        "error",
        "timeout",
    }
    index: collections.Counter[str] = collections.Counter()
    for task_id, kind, _ in rows:
        key = (task_id, index[task_id])
        index[task_id] += 1
        if kind == "canonical":
            assert strict[key].status == official[key].status == "passed", key
