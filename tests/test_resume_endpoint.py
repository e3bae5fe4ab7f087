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

from aioeval.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers
from aioeval.suites.human_eval import load_problems
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
        await anyio.sleep(0.3)  # let the server finish answering the dead client
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
