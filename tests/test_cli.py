"""The CLI end to end, as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import orjson
import pytest

from aioeval.suites.human_eval import load_problems
from aioeval.types import CandidateResult, Summary


def aioeval(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aioeval", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=cwd,
    )


def read_run(out: Path) -> tuple[Summary, list[CandidateResult]]:
    summary = msgspec.json.decode((out / "summary.json").read_bytes(), type=Summary)
    dec = msgspec.json.Decoder(CandidateResult)
    results = [dec.decode(line) for line in (out / "results.jsonl").read_bytes().splitlines()]
    return summary, results


def value(summary: Summary, name: str) -> float:
    m = summary.measurement(name)
    assert m is not None, f"{name} missing from {[x.name for x in summary.measurements]}"
    return m.value


def test_mock_replay(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = aioeval("run", "--benchmark", "human-eval", "--platform", "llm-mock", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert summary.benchmark == "human-eval"
    assert summary.dataset.size == len(results) == 20
    assert value(summary, "human-eval.pass_at_1") == pytest.approx(
        sum(r.status == "passed" for r in results) / 20
    )
    assert 0 < value(summary, "human-eval.pass_at_1") < 1
    # Nothing ran in a sandbox, so there is no sandbox latency to report.
    assert summary.measurement("human-eval.avg_latency_ms") is None
    assert summary.measurement("human-eval.total_tokens") is None
    assert "pass_at_1" in proc.stdout


def test_seed_command_line_is_accepted(tmp_path: Path) -> None:
    proc = aioeval(
        "run",
        "--domain",
        "llm",
        "--benchmark",
        "human-eval",
        "--platform",
        "llm-mock",
        "--out",
        str(tmp_path / "o"),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr


def test_execute_runs_all_canonical_solutions(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = aioeval(
        "run",
        "--benchmark",
        "human-eval",
        "--platform",
        "llm-mock",
        "--set",
        "params.execute=true",
        "--out",
        str(out),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert summary.dataset.size == 164 and len(results) == 164
    assert value(summary, "human-eval.pass_at_1") == 1.0
    assert value(summary, "human-eval.avg_latency_ms") > 0
    m = summary.measurement("human-eval.pass_at_1")
    assert m is not None and m.official and m.klass == "deterministic"
    assert {(r.problem_id, r.sample_index) for r in results} == {(p.id, 0) for p in load_problems()}
    assert summary.isolation  # the layers in force are recorded


def test_score_reports_pass_at_k(tmp_path: Path) -> None:
    problems = load_problems()[:4]
    rows = []
    for p in problems:
        for i in range(10):
            good = i % 2 == 0 or p.id == "HumanEval/0"
            rows.append(
                {
                    "task_id": p.id,
                    "completion": p.fields["canonical_solution"] if good else "    return None\n",
                }
            )
    samples = tmp_path / "samples.jsonl"
    samples.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    out = tmp_path / "scored"
    proc = aioeval(
        "score",
        "--benchmark",
        "human-eval",
        "--samples",
        str(samples),
        "--out",
        str(out),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert len(results) == 40
    assert value(summary, "human-eval.pass_at_1") == pytest.approx((1.0 + 0.5 * 3) / 4)
    assert value(summary, "human-eval.pass_at_10") == pytest.approx(1.0)
    assert summary.measurement("human-eval.pass_at_100") is None  # n = 10 < 100
    assert summary.dataset.size == 4
    # Identical candidates ran once; the rest are marked as reused verdicts.
    assert summary.executions_saved == sum(r.cached for r in results) > 0
    # Each result maps back to its input line.
    by_key = {(r.problem_id, r.sample_index): r for r in results}
    assert by_key[("HumanEval/1", 1)].status == "failed"
    assert by_key[("HumanEval/1", 2)].status == "passed"


def test_score_rejects_bad_line_with_file_and_line(tmp_path: Path) -> None:
    samples = tmp_path / "bad.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n{"task_id": "HumanEval/0"\n')
    out = tmp_path / "o"
    proc = aioeval(
        "score", "--benchmark", "human-eval", "--samples", str(samples), "--out", str(out)
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{samples}:2" in lines[0]


def test_bad_config_exits_2_with_one_line(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("params:\n  limt: 3\n")
    proc = aioeval(
        "run", "--benchmark", "human-eval", "--config", str(cfg), "--out", str(tmp_path / "o")
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "limt" in proc.stderr and "c.yaml" in proc.stderr


def test_existing_run_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert aioeval("run", "--benchmark", "human-eval", "--out", str(out), "--quiet").returncode == 0
    before = (out / "results.jsonl").read_bytes()
    proc = aioeval("run", "--benchmark", "human-eval", "--out", str(out), "--quiet")
    assert proc.returncode == 2 and "already holds a run" in proc.stderr
    assert (out / "results.jsonl").read_bytes() == before


def test_default_out_dir_is_under_runs(tmp_path: Path) -> None:
    proc = aioeval("run", "--benchmark", "human-eval", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = list((tmp_path / "runs").iterdir())
    assert len(runs) == 1 and (runs[0] / "summary.json").exists()


@pytest.mark.parametrize("isolation", ["minimal", "best"])
def test_isolation_mode_reaches_the_sandbox(tmp_path: Path, isolation: str) -> None:
    out = tmp_path / "run"
    proc = aioeval(
        "run",
        "--benchmark",
        "human-eval",
        "--set",
        "params.execute=true",
        "--set",
        "params.limit=3",
        "--set",
        f"params.sandbox.isolation={isolation}",
        "--out",
        str(out),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    summary, _ = read_run(out)
    assert "rlimits" in summary.isolation
    if isolation == "minimal":
        assert "landlock" not in summary.isolation and "network-namespace" not in summary.isolation
    elif os.geteuid() == 0 and Path("/sys/fs/cgroup/pids").exists():
        assert "network-namespace" in summary.isolation
