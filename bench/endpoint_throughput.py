"""Endpoint path: rate-limit adherence and generation/execution overlap.

Against the fake OpenAI server (aioeval.fake_openai) enforcing R requests
per minute with a token bucket (one second's worth of burst) and a random
latency per request:

- configured: ``target.rate_limit.rpm = R``. Reported: accepted requests per
  minute / R (measured at the server, between the first and the last
  accepted request) and the number of 429s. Target: >= 0.95 and zero 429s.
- adaptive: no rpm configured (max_concurrency 16, retries on); the client
  only has 429s, Retry-After and the x-ratelimit headers to go by.
  Reported the same way.
- overlap: a full HumanEval run (164 problems, canonical answers from the
  fake server, n samples each, one request per sample, dedup off) against
  the same run with a no-op sandbox (generation only)
  and the same candidates scored without a model (execution only, `score`
  path). The fake's rpm is chosen so both stages take about as long (the
  worst case for overlap); the ideal full/slower ratio is 1, a pipeline
  without overlap gets full/sum = 1.

Every figure is measured in this run; nothing is compared against a stored
number. Prints one JSON line. Runtime about a minute.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec
import orjson

from aioeval.config import decode_config
from aioeval.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.sandbox.protocol import Outcome
from aioeval.suites.base import unwrap_fence
from aioeval.suites.human_eval import load_problems
from aioeval.types import Summary

PROBLEMS = load_problems()


class NoopPool:
    """Passes every candidate instantly: isolates the generation stage."""

    size = 2

    def __init__(self) -> None:
        self.layers: list[str] = []

    async def run(self, program: str, value_expr: str | None = None) -> Outcome:
        return Outcome(id=0, status="passed", wall_ms=0.0)

    async def aclose(self) -> None:
        pass


def endpoint_config(url: str, **over: Any) -> Any:
    target = {"mode": "runtime", "endpoint": url, "model": "fake-model", **over.pop("target", {})}
    params = {"allow_code_execution": True, "dedup": False, **over}
    return decode_config({"target": target, "params": params})


class ServerClock:
    """Timestamps of accepted requests, read from the fake server."""

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        self.times: list[float] = []
        original = fake._answer

        async def timed(request: Any, fault: str, headers: dict[str, str]) -> Any:
            self.times.append(time.monotonic())
            return await original(request, fault, headers)

        fake._answer = timed  # type: ignore[method-assign]

    def rpm(self) -> float:
        t = self.times
        return (len(t) - 1) / (t[-1] - t[0]) * 60.0 if len(t) > 1 else 0.0


async def rate_case(rpm: float, seconds: float, configured: bool, out: Path) -> dict[str, Any]:
    fake_cfg = FakeConfig(latency_s=(0.05, 0.25), rpm=rpm, seed=1)
    requests = max(20, int(rpm * seconds / 60))
    n = max(1, -(-requests // len(PROBLEMS)))
    limit = -(-requests // n)
    async with FakeOpenAI(fake_cfg, human_eval_answers(PROBLEMS)) as fake:
        clock = ServerClock(fake)
        rate_limit: dict[str, Any] = {"max_concurrency": 16}
        if configured:
            rate_limit["rpm"] = rpm
        cfg = endpoint_config(
            fake.url,
            target={"rate_limit": rate_limit, "use_n": False},
            limit=limit,
            n_samples=n,
            retry={"max_attempts": 20, "backoff_base_s": 0.05, "backoff_max_s": 1.0},
        )
        spec = RunSpec(
            benchmark="human-eval", platform="llm-endpoint", config=cfg, out_dir=str(out)
        )
        t0 = time.perf_counter()
        summary = await evaluate(spec, pool_factory=lambda _c: NoopPool())
        wall = time.perf_counter() - t0
    achieved = clock.rpm()
    return {
        "requests": fake.requests,
        "accepted": fake.served,
        "rate_limited_429": fake.rate_limited,
        "achieved_rpm": round(achieved, 1),
        "ratio": round(achieved / rpm, 4),
        "wall_s": round(wall, 2),
        "complete": summary.complete,
    }


async def timed(spec: RunSpec, **kw: Any) -> tuple[float, Summary]:
    t0 = time.perf_counter()
    summary = await evaluate(spec, **kw)
    return time.perf_counter() - t0, summary


async def overlap_case(root: Path, workers: int, n: int) -> dict[str, Any]:
    # Execution-only first, on the exact candidates the model will return.
    answer = human_eval_answers(PROBLEMS)
    samples = root / "samples.jsonl"
    with samples.open("wb") as fh:
        for p in PROBLEMS:
            text = unwrap_fence(answer(p.fields["prompt"], 0))
            for _ in range(n):
                fh.write(orjson.dumps({"task_id": p.id, "completion": text}) + b"\n")
    base = {"params": {"workers": workers, "dedup": False}}
    score = RunSpec(
        benchmark="human-eval",
        config=decode_config(base),
        samples=str(samples),
        out_dir=str(root / "exec"),
    )
    exec_s, exec_summary = await timed(score)
    # Generation paced to take as long as execution: the worst case for overlap.
    requests = len(PROBLEMS) * n
    rpm = min(12000.0, max(300.0, requests / exec_s * 60.0))
    fake_cfg = FakeConfig(latency_s=(0.02, 0.1), rpm=rpm, seed=2)
    async with FakeOpenAI(fake_cfg, answer) as fake:
        cfg = endpoint_config(
            fake.url,
            target={"rate_limit": {"rpm": rpm}, "use_n": False},
            workers=workers,
            n_samples=n,
        )
        gen = RunSpec(
            benchmark="human-eval", platform="llm-endpoint", config=cfg, out_dir=str(root / "gen")
        )
        gen_s, _ = await timed(gen, pool_factory=lambda _c: NoopPool())
        full = msgspec.structs.replace(gen, out_dir=str(root / "full"))
        full_s, full_summary = await timed(full)
    return {
        "rpm": round(rpm, 1),
        "candidates": requests,
        "full_s": round(full_s, 2),
        "generation_only_s": round(gen_s, 2),
        "execution_only_s": round(exec_s, 2),
        "full_over_slower": round(full_s / max(gen_s, exec_s), 3),
        "full_over_sum": round(full_s / (gen_s + exec_s), 3),
        "passed": full_summary.counts.get("passed", 0),
        "passed_execution_only": exec_summary.counts.get("passed", 0),
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="aioeval-bench-endpoint-"))
    configured = await rate_case(args.rpm, args.seconds, True, root / "configured")
    adaptive = await rate_case(args.rpm, args.seconds, False, root / "adaptive")
    overlap = await overlap_case(root, args.workers, args.samples)
    return {
        "bench": "endpoint_throughput",
        "R_rpm": args.rpm,
        "window_s": args.seconds,
        "configured": configured,
        "adaptive": adaptive,
        "overlap": overlap,
        "configured_target_met": configured["ratio"] >= 0.95
        and configured["rate_limited_429"] == 0,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rpm", type=float, default=1200.0, help="the fake server's limit R")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each rate case")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=4, help="samples per problem (overlap)")
    args = parser.parse_args()
    print(json.dumps(anyio.run(main, args)))
