"""kill -9 an endpoint run mid-flight, resume it, and count what the server saw."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import anyio
import msgspec
import pytest

from aioeval.suites.human_eval.suite import load_problems
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers
from aioeval.types import CandidateResult, Summary

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]

PROBLEMS = load_problems()[:10]
N = 4
WRONG = {"HumanEval/3", "HumanEval/7"}


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


async def test_kill_9_mid_run_then_resume_repeats_no_request(tmp_path: Path) -> None:
    out = tmp_path / "run"
    answers = human_eval_answers(PROBLEMS, wrong=WRONG)
    async with FakeOpenAI(FakeConfig(latency_s=(0.05, 0.15)), answers) as fake:
        cfg = {
            "target": {
                "mode": "runtime",
                "endpoint": fake.url,
                "model": "fake-model",
                "use_n": False,  # one request per sample, so requests count samples
                "rate_limit": {"max_concurrency": 2},
            },
            "params": {
                "allow_code_execution": True,
                "limit": len(PROBLEMS),
                "n_samples": N,
                "k": [1, 4],
            },
        }
        path = tmp_path / "cfg.yaml"
        path.write_text(json.dumps(cfg))
        argv = [
            sys.executable,
            "-m",
            "aioeval",
            "run",
            "--benchmark",
            "human-eval",
            "--platform",
            "llm-endpoint",
            "--config",
            str(path),
            "--out",
            str(out),
            "--quiet",
        ]
        proc = await anyio.open_process(argv)
        try:
            with anyio.fail_after(60):
                while _lines(out / "results.jsonl") < 8:
                    await anyio.sleep(0.01)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            await proc.wait()
        with anyio.fail_after(30):  # the server is done with the dead client's connections
            while fake._runner is not None and fake._runner.server.connections:
                await anyio.sleep(0.01)
        first_requests = fake.requests
        generated = _lines(out / "generations.jsonl")
        judged = _lines(out / "results.jsonl")
        assert 8 <= judged <= generated < len(PROBLEMS) * N, "the kill should land mid-run"
        assert not (out / "summary.json").exists()

        resumed = await anyio.run_process(
            [sys.executable, "-m", "aioeval", "run", "--resume", str(out), "--quiet"], check=False
        )
        assert resumed.returncode == 0, resumed.stderr.decode()
        # Requests in flight at the kill were paid for but never journaled:
        # those samples (and only those, plus the never-generated) are asked again.
        lost_in_flight = first_requests - generated
        assert fake.requests == len(PROBLEMS) * N + lost_in_flight

    dec = msgspec.json.Decoder(CandidateResult)
    results = [dec.decode(x) for x in (out / "results.jsonl").read_bytes().splitlines()]
    keys = [(r.problem_id, r.sample_index) for r in results]
    assert len(keys) == len(set(keys)) == len(PROBLEMS) * N
    assert all((r.status == "failed") == (r.problem_id in WRONG) for r in results)
    summary = msgspec.json.decode((out / "summary.json").read_bytes(), type=Summary)
    assert summary.complete and summary.candidates == len(PROBLEMS) * N
    m = summary.measurement("human-eval.pass_at_1")
    assert m is not None and m.value == pytest.approx(1 - len(WRONG) / len(PROBLEMS))
    # Completions journaled before the kill but never judged were judged now.
    assert any(f"re-judged {generated - judged} journaled completions" in n for n in summary.notes)


async def _resume_run(url: str, out: Path) -> Summary:
    from aioeval.config import decode_config
    from aioeval.run.evaluate import RunSpec, evaluate

    raw = {
        "target": {"mode": "runtime", "endpoint": url, "model": "fake-model"},
        "params": {
            "allow_code_execution": True,
            "limit": 1,  # one sample: the faults (in request order) all meet it
            "retry": {"max_attempts": 2, "backoff_base_s": 0.01, "backoff_max_s": 0.02},
        },
    }
    spec = RunSpec(
        benchmark="human-eval",
        platform="llm-endpoint",
        config=decode_config(raw),
        out_dir=str(out),
        resume=(out / "run.json").exists(),
    )
    return await evaluate(spec)


def _measure(summary: Summary, name: str) -> float | None:
    m = summary.measurement(f"human-eval.{name}")
    return m.value if m is not None else None


async def test_429s_and_retries_of_earlier_invocations_stay_counted(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # The first request: a 429 (free), then two 503s: out of attempts.
    faults = ["429", "503", "503"]
    async with FakeOpenAI(
        FakeConfig(faults=faults, retry_after_s=0.01), human_eval_answers(PROBLEMS)
    ) as fake:
        first = await _resume_run(fake.url, out)
        assert first.incomplete == {"generation:503": 1}
        assert (_measure(first, "rate_limited_count"), _measure(first, "retry_count")) == (1, 2)
        second = await _resume_run(fake.url, out)
        third = await _resume_run(fake.url, out)
    assert second.complete and third.complete
    for s in (second, third):  # the same totals however often it is resumed
        assert _measure(s, "rate_limited_count") == 1
        assert _measure(s, "retry_count") == 2
        assert _measure(s, "retry_overhead_ms") == _measure(first, "retry_overhead_ms")
        assert _measure(s, "total_tokens") == fake.tokens
    superseded = (out / "superseded.jsonl").read_bytes().splitlines()
    assert len(superseded) == 1 and b"generation:503" in superseded[0]


async def test_a_crash_between_superseding_and_rewriting_counts_nothing_twice(
    tmp_path: Path,
) -> None:
    from aioeval.run.resume import ResumeState
    from aioeval.types import Candidate, Execution, Generation, InfraError, Passed, make_result

    gen = Generation(attempts=3, retry_count=2, rate_limited=1, retry_overhead_ms=9.0)
    failed = make_result(
        Candidate(problem_id="HumanEval/0", sample_index=0, raw="", text="", generation=gen),
        InfraError(cause="generation:503"),
        Execution(),
    )
    sandbox = make_result(
        Candidate(problem_id="HumanEval/1", sample_index=0, raw="x", text="x", generation=gen),
        InfraError(cause="sandbox"),
        Execution(),
    )
    ok = make_result(
        Candidate(problem_id="HumanEval/2", sample_index=0, raw="x", text="x"),
        Passed(),
        Execution(wall_ms=1.0),
    )
    (tmp_path / "run.json").write_text('{"benchmark": "humaneval"}')
    enc = msgspec.json.Encoder()
    (tmp_path / "results.jsonl").write_bytes(
        b"".join(enc.encode(r) + b"\n" for r in (failed, sandbox, ok))
    )
    carried: list[CandidateResult] = []
    ResumeState(tmp_path)._supersede(carried.append)  # ... and the process dies here
    carried.clear()
    state = ResumeState(tmp_path)
    state.compact(lambda _r: None, carried.append)
    # Only generation's own failure is carried: the sandbox one's completion
    # is judged again with its accounting.
    assert carried == [failed]
    assert len((tmp_path / "superseded.jsonl").read_bytes().splitlines()) == 2
    assert state.kept == 1 and state.dropped_infra == 2
