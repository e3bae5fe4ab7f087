"""Reading run directories back: streaming, crash tolerance, clear errors."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from results import candidate_result

from aioeval.analysis.runs import iter_results, load_run, load_runs, tally
from aioeval.errors import InputError
from aioeval.types import CandidateResult, DatasetInfo, Measurement, Summary


def result(pid: str, i: int, status: str, **kw: object) -> CandidateResult:
    return candidate_result(pid, i, status, **{"wall_ms": 1.0, "cpu_ms": 1.0, **kw})


def write_run(path: Path, results: list[CandidateResult], benchmark: str = "human-eval") -> Path:
    path.mkdir(parents=True)
    summary = Summary(
        benchmark=benchmark,
        dataset=DatasetInfo(name="d", version="1", digest="abc", size=2),
        measurements=[
            Measurement(
                name=f"{benchmark}.pass_at_1",
                value=0.5,
                unit="fraction",
                klass="deterministic",
                official=True,
            )
        ],
    )
    (path / "summary.json").write_bytes(msgspec.json.encode(summary))
    (path / "results.jsonl").write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in results))
    return path


def test_truncated_last_line_is_skipped(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [result("p", 0, "passed"), result("p", 1, "failed")])
    with (run / "results.jsonl").open("ab") as fh:
        fh.write(b'{"problem_id": "p", "sample_in')
    assert [r.sample_index for r in iter_results(run / "results.jsonl")] == [0, 1]


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [result("p", 0, "passed")])
    with (run / "results.jsonl").open("ab") as fh:
        fh.write(b"not json\n")
        fh.write(msgspec.json.encode(result("p", 1, "passed")) + b"\n")
    with pytest.raises(InputError, match=r"results\.jsonl:2: corrupt journal line"):
        list(iter_results(run / "results.jsonl"))


def test_missing_summary_is_a_clear_error(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [])
    (run / "summary.json").unlink()
    with pytest.raises(InputError, match=r"summary\.json: missing"):
        load_run(run)


def test_bad_summary_names_the_field(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [])
    (run / "summary.json").write_text('{"benchmark": 3}')
    with pytest.raises(InputError, match=r"summary\.json: .*benchmark"):
        load_run(run)


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a run directory"):
        load_runs(tmp_path)


def test_two_runs_of_one_benchmark_are_ambiguous(tmp_path: Path) -> None:
    write_run(tmp_path / "x", [])
    write_run(tmp_path / "y", [])
    with pytest.raises(InputError, match="two runs of human-eval"):
        load_runs(tmp_path)


def test_tally_counts_like_the_summary() -> None:
    rs = [
        result("p", 0, "passed"),
        result("p", 2, "timeout", reason="slow"),
        result("p", 1, "failed", reason="AssertionError", candidate="bad"),
        result("q", 0, "infra_error", infra_cause="sandbox"),
        result("q", 1, "passed", cached=True),
    ]
    t = tally("human-eval", rs)
    assert t.pass_counts() == {"p": (3, 1), "q": (1, 1)}
    assert t.problems["q"].infra == 1
    failure = t.problems["p"].failure
    assert failure is not None
    assert (failure.sample_index, failure.status, failure.candidate) == (1, "failed", "bad")
    assert len(t.wall_ms) == 4  # the cached one did not run


def test_tally_follows_cruxeval_official_rule() -> None:
    rs = [
        # a problem with a pass: skipped generations drop out of n
        result("sample_0", 0, "passed"),
        result("sample_0", 1, "failed", skipped=True),
        # nothing passed: every generation stays, c = 0
        result("sample_1", 0, "failed", skipped=True),
        result("sample_1", 1, "failed"),
    ]
    official = tally("cruxeval-o", rs, scoring="official")
    assert official.pass_counts() == {"sample_0": (1, 1), "sample_1": (2, 0)}
    strict = tally("cruxeval-o", rs, scoring="strict")
    assert strict.pass_counts() == {"sample_0": (2, 1), "sample_1": (2, 0)}


def test_tally_counts_duplicate_lines() -> None:
    t = tally("human-eval", [result("p", 0, "failed"), result("p", 0, "passed")])
    assert t.duplicates == 1
