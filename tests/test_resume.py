"""Crash-safe journal and --resume, for real: kill -9 mid-run, then resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import orjson
import pytest
from scored import read_results

from aioeval.errors import InputError
from aioeval.run.journal import read_lines
from aioeval.suites.human_eval.suite import load_problems
from aioeval.types import CandidateResult, Summary

SLOW_GOOD = "    import time\n    t = time.process_time()\n    while time.process_time() - t < 0.25:\n        pass\n"


def _samples(tmp_path: Path) -> tuple[Path, dict[tuple[str, int], str]]:
    expected: dict[tuple[str, int], str] = {}
    rows = []
    for p in load_problems()[:6]:
        for i in range(2):
            # Burn CPU, then fall through to the canonical body (pass) or not.
            body = SLOW_GOOD + (p.fields["canonical_solution"] if i == 0 else "    return None\n")
            rows.append({"task_id": p.id, "completion": body + f"# {i}\n"})
            expected[(p.id, i)] = "passed" if i == 0 else "failed"
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path, expected


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "aioeval", *args]


def _results(out: Path) -> list[CandidateResult]:
    return read_results(out)


def test_kill_9_then_resume(tmp_path: Path) -> None:
    samples, expected = _samples(tmp_path)
    out = tmp_path / "run"
    proc = subprocess.Popen(
        _cli(
            "score",
            "--benchmark",
            "human-eval",
            "--samples",
            str(samples),
            "--out",
            str(out),
            "--quiet",
            "--set",
            "params.workers=2",
            # Each call burns 0.25 s of CPU (HumanEval/0's test makes seven):
            # a backstop that a loaded machine cannot turn into "starved".
            "--set",
            "params.sandbox.wall_timeout_s=60",
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    journal = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_bytes().count(b"\n") >= 4:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = journal.read_bytes().count(b"\n")
    assert 4 <= before < len(expected), "the kill should land mid-run"
    assert not (out / "summary.json").exists()
    # The crash case: a record cut off mid-write.
    with journal.open("ab") as fh:
        fh.write(b'{"problem_id":"HumanEval/0","sample_in')

    res = subprocess.run(
        _cli("run", "--resume", str(out), "--quiet"), capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    results = _results(out)
    keys = [(r.problem_id, r.sample_index) for r in results]
    assert len(keys) == len(set(keys)) == len(expected)
    assert {k: r.status for k, r in zip(keys, results, strict=True)} == expected
    summary = msgspec.json.decode((out / "summary.json").read_bytes(), type=Summary)
    assert summary.candidates == len(expected)
    m = summary.measurement("human-eval.pass_at_1")
    assert m is not None and m.value == pytest.approx(0.5)
    # Journaled verdicts were kept, not executed again.
    assert any(
        f"kept {before} journaled verdicts, executed {len(expected) - before} more" in n
        for n in summary.notes
    )


def test_resume_refuses_a_different_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ok = subprocess.run(
        _cli(
            "run",
            "--benchmark",
            "human-eval",
            "--set",
            "params.execute=true",
            "--set",
            "params.limit=3",
            "--out",
            str(out),
            "--quiet",
        ),
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    res = subprocess.run(
        _cli("run", "--resume", str(out), "--set", "params.limit=4", "--quiet"),
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2
    assert "cannot resume" in res.stderr and res.stderr.count("\n") == 1
    res = subprocess.run(
        _cli("run", "--resume", str(out), "--benchmark", "cruxeval-o", "--quiet"),
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and "cannot resume" in res.stderr


def test_resume_of_a_finished_run_is_a_no_op(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = (
        "run",
        "--benchmark",
        "human-eval",
        "--set",
        "params.execute=true",
        "--set",
        "params.limit=3",
    )
    assert subprocess.run(_cli(*args, "--out", str(out), "--quiet")).returncode == 0
    first = _results(out)
    res = subprocess.run(
        _cli("run", "--resume", str(out), "--quiet"), capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    assert [(r.problem_id, r.status) for r in _results(out)] == [
        (r.problem_id, r.status) for r in first
    ]
    summary = msgspec.json.decode((out / "summary.json").read_bytes(), type=Summary)
    assert summary.candidates == 3
    assert any("kept 3 journaled verdicts, executed 0 more" in n for n in summary.notes)


def test_corruption_before_the_last_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    good = b'{"x": 1}\n'
    path.write_bytes(good + b"{broken\n" + good)
    with pytest.raises(InputError, match=r"results\.jsonl:2: corrupt journal line"):
        list(read_lines(path, msgspec.json.Decoder()))
    path.write_bytes(good + good + b'{"trunc')
    assert len(list(read_lines(path, msgspec.json.Decoder()))) == 2
