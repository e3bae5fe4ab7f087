"""Endpoint path: rate-limit adherence, limits learned, faults survived, and
generation/execution overlap, against the fake OpenAI server
(aioeval.testing.fake_openai) on 127.0.0.1. Generation-only cases use a no-op
sandbox (`aioeval.testing.ScriptedExecutor`: every candidate passes at
once), so the figures are the generation stage's alone.

Cases (``--only`` picks some; all by default):

- ``configured``: ``target.rate_limit.rpm = R`` (one second's burst at the
  server). Reported: accepted requests per minute / R, measured at the
  server between the first and the last accepted request, and the 429s.
  Target: >= 0.999 and zero 429s.
- ``matrix`` (the limit unknown to the client: no ``target.rate_limit``):
  240 and 600 rpm, burst 2, 150-450 ms latency, in each header dialect the
  fake speaks (``openai``, ``gateway``, ``none``: see fake_openai); a
  parallel cap of 4 answered with ``Retry-After: 60``, timed against a run
  told ``max_concurrency: 4``; a tpm limit metered on usage (openai and
  none dialects). Target: >= 0.9 of the allowed rate, <= 5% of requests
  answered 429, no sample lost; the parallel cap within 1.2x of the told
  run's time.
- ``tpm``: ``tpm`` configured with ``tpm_counts: usage`` against the same
  usage-metered server. Target: >= 0.9 of its limit. (The token rate is
  tokens reported in usage over the time from the first accepted request
  to the last answer, less the server's one-second burst.)
- ``faults``: 5xx every 7th request and a dropped connection every 11th,
  900 rpm (burst 2) unknown to the client, with OpenAI headers and with
  none (bare 429s), README retry policy with ``max_attempts: 8``, repeated
  ``--reps`` times each. Target: no sample ever ends as infra_error.
- ``overlap``: a full HumanEval run (164 problems, canonical answers from
  the fake server, n samples each, one request per sample, dedup off)
  against the same run with a no-op sandbox (generation only) and the same
  candidates scored without a model (execution only). The fake's rpm is
  chosen so both stages take about as long (the worst case for overlap);
  the ideal full/slower ratio is 1, a pipeline without overlap gets
  full/sum = 1.

``--seeds A-B`` runs the matrix once per fake-server seed and reports, per
case, how many runs met the target (with ``--matrix tpm_usage_none``, the
case whose target is hardest to meet in every run).

Every figure is measured in this run; nothing is compared against a stored
number. Prints one JSON line (with the load average before and after).
Runtime about ten minutes for everything.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec
import orjson

from aioeval.config import decode_config
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites.base import unwrap_fence
from aioeval.suites.human_eval.suite import load_problems
from aioeval.testing.executors import ScriptedExecutor
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers
from aioeval.types import Summary

PROBLEMS = load_problems()
LATENCY = (0.15, 0.45)
README_RETRY = {"max_attempts": 4, "backoff_base_s": 0.2, "backoff_max_s": 5.0}


def endpoint_config(url: str, **over: Any) -> Any:
    target = {"mode": "runtime", "endpoint": url, "model": "fake-model", **over.pop("target", {})}
    params = {"allow_code_execution": True, "dedup": False, **over}
    return decode_config({"target": target, "params": params})


async def generate(
    fake_cfg: FakeConfig, out: Path, *, target: dict[str, Any], **params: Any
) -> tuple[FakeOpenAI, Summary, float]:
    """One generation-only run of the first ``limit`` problems (the no-op
    executor runs nothing, so no sandbox isolation is asked for)."""
    params = {"sandbox": {"isolation": "minimal"}, **params}
    async with FakeOpenAI(fake_cfg, human_eval_answers(PROBLEMS)) as fake:
        cfg = endpoint_config(fake.url, target={"use_n": False, **target}, **params)
        spec = RunSpec(
            benchmark="human-eval", platform="llm-endpoint", config=cfg, out_dir=str(out)
        )
        t0 = time.perf_counter()
        summary = await evaluate(spec, pool_factory=lambda _c: ScriptedExecutor(size=2))
        wall = time.perf_counter() - t0
    return fake, summary, wall


def request_figures(fake: FakeOpenAI, rpm: float, summary: Summary, wall: float) -> dict[str, Any]:
    t = fake.accepted_at
    achieved = (len(t) - 1) / (t[-1] - t[0]) * 60.0 if len(t) > 1 else 0.0
    return {
        "requests": fake.requests,
        "rate_limited_429": fake.rate_limited,
        "share_429": round(fake.rate_limited / max(1, fake.requests), 4),
        "achieved_rpm": round(achieved, 1),
        "ratio": round(achieved / rpm, 4),
        "wall_s": round(wall, 2),
        "infra_errors": summary.counts.get("infra_error", 0),
    }


def token_figures(fake: FakeOpenAI, tpm: float, burst_s: float) -> dict[str, Any]:
    start = fake.accepted_at[0]
    end = fake.usage_at[-1][0]
    tokens = sum(n for _, n in fake.usage_at)
    rate = (tokens - tpm / 60.0 * burst_s) / (end - start) * 60.0
    return {
        "tokens": tokens,
        "achieved_tpm": round(rate),
        "ratio": round(rate / tpm, 4),
        "rate_limited_429": fake.rate_limited,
        "share_429": round(fake.rate_limited / max(1, fake.requests), 4),
        "wall_s": round(end - start, 2),
    }


async def configured_case(rpm: float, seconds: float, root: Path) -> dict[str, Any]:
    requests = max(20, int(rpm * seconds / 60))
    n = max(1, -(-requests // len(PROBLEMS)))
    fake, summary, wall = await generate(
        FakeConfig(latency_s=(0.05, 0.25), rpm=rpm, seed=1),
        root / "configured",
        target={"rate_limit": {"rpm": rpm, "max_concurrency": 16}},
        limit=-(-requests // n),
        n_samples=n,
        retry=README_RETRY,
    )
    out = request_figures(fake, rpm, summary, wall)
    out["target_met"] = out["ratio"] >= 0.999 and out["rate_limited_429"] == 0
    return out


def _meets(case: dict[str, Any]) -> bool:
    return bool(case["ratio"] >= 0.9 and case["share_429"] <= 0.05 and not case["infra_errors"])


async def matrix_case(root: Path, problems: int, pick: set[str], seed: int) -> dict[str, Any]:
    """The unknown-limit matrix; ``pick`` names the cases to run (empty: all),
    ``seed`` the fake server's draws (latencies, completions)."""
    out: dict[str, Any] = {}
    for rpm in (240.0, 600.0):
        for hints in ("openai", "gateway", "none"):
            if pick and f"rpm{rpm:.0f}_{hints}" not in pick:
                continue
            fake, summary, wall = await generate(
                FakeConfig(latency_s=LATENCY, rpm=rpm, burst=2, hints=hints, seed=seed),  # type: ignore[arg-type]
                root / f"rpm{rpm:.0f}-{hints}",
                target={},
                limit=problems,
                retry=README_RETRY,
            )
            case = request_figures(fake, rpm, summary, wall)
            case["target_met"] = _meets(case)
            out[f"rpm{rpm:.0f}_{hints}"] = case
    if not pick or "parallel_cap_4" in pick:
        out["parallel_cap_4"] = await parallel_case(root, problems, seed)
    for hints in ("openai", "none"):
        if pick and f"tpm_usage_{hints}" not in pick:
            continue
        out[f"tpm_usage_{hints}"] = await tpm_case(
            root, problems, configured=False, hints=hints, seed=seed
        )
    return out


async def parallel_case(root: Path, problems: int, seed: int) -> dict[str, Any]:
    cap = FakeConfig(latency_s=LATENCY, max_parallel=4, parallel_retry_after_s=60.0, seed=seed)
    _, told, told_s = await generate(
        cap, root / "told4", target={"rate_limit": {"max_concurrency": 4}}, limit=problems
    )
    fake, learned, learned_s = await generate(
        cap, root / "cap4", target={}, limit=problems, retry=README_RETRY
    )
    return {
        "told_max_concurrency_4_s": round(told_s, 2),
        "unknown_s": round(learned_s, 2),
        "time_ratio": round(learned_s / told_s, 3),
        "rate_limited_429": fake.rate_limited,
        "share_429": round(fake.rate_limited / max(1, fake.requests), 4),
        "infra_errors": learned.counts.get("infra_error", 0) + told.counts.get("infra_error", 0),
        "target_met": learned_s <= 1.2 * told_s and not learned.counts.get("infra_error", 0),
    }


TPM = 60_000.0


async def tpm_case(
    root: Path, problems: int, *, configured: bool, hints: str, seed: int
) -> dict[str, Any]:
    fake_cfg = FakeConfig(latency_s=LATENCY, tpm=TPM, tpm_counts="usage", hints=hints, seed=seed)  # type: ignore[arg-type]
    limit = {"tpm": TPM, "tpm_counts": "usage"} if configured else {}
    fake, summary, _ = await generate(
        fake_cfg,
        root / f"tpm-{'configured' if configured else 'unknown'}-{hints}",
        target={"rate_limit": limit},
        limit=problems,
        retry=README_RETRY,
    )
    case = token_figures(fake, TPM, fake_cfg.tpm_burst_s)
    case["infra_errors"] = summary.counts.get("infra_error", 0)
    case["target_met"] = case["ratio"] >= 0.9 if configured else _meets(case)
    return case


async def faults_case(root: Path, reps: int, problems: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for hints in ("openai", "none"):
        infra = rate_limited = faults = requests = 0
        for rep in range(reps):
            cfg = FakeConfig(
                latency_s=(0.05, 0.2),
                rpm=900,
                burst=2,
                hints=hints,  # type: ignore[arg-type]
                fault_every={"503": 7, "drop": 11},
                seed=rep,
            )
            fake, summary, _ = await generate(
                cfg,
                root / f"faults-{hints}-{rep}",
                target={"request_timeout_s": 10},
                limit=problems,
                retry={**README_RETRY, "max_attempts": 8},
            )
            infra += summary.counts.get("infra_error", 0)
            rate_limited += fake.rate_limited
            faults += sum(fake.faults.values())
            requests += fake.requests
        out[hints] = {
            "reps": reps,
            "samples_per_rep": problems,
            "requests": requests,
            "faults_injected": faults,
            "rate_limited_429": rate_limited,
            "infra_errors": infra,
            "target_met": infra == 0,
        }
    return out


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
        gen_s, _ = await timed(gen, pool_factory=lambda _c: ScriptedExecutor(size=2))
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


def seed_range(text: str) -> range:
    """``A-B`` (inclusive) or ``A``, for ``--seeds``."""
    first, _, last = text.partition("-")
    try:
        seeds = range(int(first), int(last or first) + 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not A-B (two whole numbers)") from None
    if not seeds:
        raise argparse.ArgumentTypeError(f"{text!r}: the range is empty")
    return seeds


async def seed_sweep(root: Path, problems: int, pick: set[str], seeds: range) -> dict[str, Any]:
    """The matrix once per fake-server seed in ``seeds``: a target is met in
    every run only if no seed misses it, and one seed's run says little
    about the next (the draws move every request's timing)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for seed in seeds:
        for name, case in (await matrix_case(root / f"seed{seed}", problems, pick, seed)).items():
            runs.setdefault(name, []).append({"seed": seed, **case})
    out: dict[str, Any] = {}
    for name, cases in runs.items():
        ratios = [c["ratio"] for c in cases if "ratio" in c]
        out[name] = {
            "runs": len(cases),
            "target_met": sum(c["target_met"] for c in cases),
            "missed_seeds": [c["seed"] for c in cases if not c["target_met"]],
            "ratio_min": min(ratios, default=None),
            "ratio_max": max(ratios, default=None),
            "time_ratio_max": max(
                (c["time_ratio"] for c in cases if "time_ratio" in c), default=None
            ),
            "max_429": max(c["rate_limited_429"] for c in cases),
            "per_seed": [
                [c["seed"], c.get("ratio", c.get("time_ratio")), c["rate_limited_429"]]
                for c in cases
            ],
        }
    return out


CASES = ("configured", "matrix", "tpm", "faults", "overlap")


async def main(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="aioeval-bench-endpoint-"))
    only = set(args.only.split(",")) if args.only else set(CASES)
    out: dict[str, Any] = {
        "bench": "endpoint_throughput",
        "loadavg_before": os.getloadavg(),
        "seed": args.seed,
    }
    if "configured" in only:
        out["configured"] = await configured_case(args.rpm, args.seconds, root)
        out["configured"]["R_rpm"] = args.rpm
    if "matrix" in only:
        pick = set(args.matrix.split(",")) if args.matrix else set()
        if args.seeds:
            out["seeds"] = [args.seeds[0], args.seeds[-1]]
            out["seed_sweep"] = await seed_sweep(root, args.problems, pick, args.seeds)
        else:
            out["unknown_limit"] = await matrix_case(root, args.problems, pick, args.seed)
    if "tpm" in only:
        out["tpm_configured"] = await tpm_case(
            root, args.problems, configured=True, hints="openai", seed=args.seed
        )
    if "faults" in only:
        out["faults"] = await faults_case(root, args.reps, args.fault_problems)
    if "overlap" in only:
        out["overlap"] = await overlap_case(root, args.workers, args.samples)
    out["loadavg_after"] = os.getloadavg()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help=f"comma-separated subset of {','.join(CASES)}")
    parser.add_argument(
        "--matrix",
        default="",
        help="comma-separated matrix cases (rpm240_openai, ..., rpm600_none, parallel_cap_4, "
        "tpm_usage_openai, tpm_usage_none); all by default",
    )
    parser.add_argument("--rpm", type=float, default=1200.0, help="configured case: the limit R")
    parser.add_argument("--seconds", type=float, default=15.0, help="configured case length")
    parser.add_argument("--problems", type=int, default=164, help="samples per matrix/tpm run")
    parser.add_argument(
        "--seed",
        type=int,
        default=1,
        help="matrix/tpm cases: the fake server's seed (its latency and completion draws)",
    )
    parser.add_argument(
        "--seeds",
        type=seed_range,
        default=None,
        help="matrix case: run it once per seed in A-B (inclusive) and report how many met "
        "the target, the lowest ratio and the most 429s (about a minute per case and seed)",
    )
    parser.add_argument("--reps", type=int, default=20, help="faults case repetitions")
    parser.add_argument("--fault-problems", type=int, default=40, help="samples per faults rep")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=4, help="samples per problem (overlap)")
    args = parser.parse_args()
    print(json.dumps(anyio.run(main, args)))
