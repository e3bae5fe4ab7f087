"""Rate control judged on limit shapes it was not built on, several seeds each.

Each run is a generation-only HumanEval run (the engine's llm-endpoint path,
a no-op sandbox: `aioeval.testing.ScriptedExecutor`) against the fake
OpenAI server (`aioeval.testing.fake_openai`) on 127.0.0.1, with no limit
told to the client unless the shape says so. Shapes (``--only`` picks some):

- ``told``: 240 rpm (bucket, burst 2) and ``target.rate_limit.rpm: 240``:
  the reference; allowed = 240 rpm.
- ``window``: 60 requests per fixed minute; a 429 says ``Retry-After``
  until the minute ends, and nothing else. 121 requests, so the best
  possible run spans exactly two minutes; allowed = 60 rpm.
- ``shared``: 300 rpm (bucket, burst 5) on a key another client also uses,
  taking 100 rpm on average in bursts of 1-5 at random times; bare 429s.
  Allowed = 300 rpm less what the other client took over the run.
- ``slow``: 120 rpm (bucket, burst 2), answers after 2-8 s; bare 429s.
- ``liar``: 240 rpm (bucket, burst 2); successes say ``remaining: -1`` or
  ``0``, 429s say nothing.
- ``tokens``: 60k tokens per minute metered on usage (one second's burst),
  bare 429s; rates in tokens, allowed = 60k tpm.
- ``shared-*``: more shared keys (``shared_shape``): the bucket's burst (1,
  2, 5, 10), the share of the rate the other client takes (0.2, 0.33, 0.5),
  bare 429s or OpenAI's headers, other latencies.

``--heldout`` runs `HELDOUT` instead: shapes and seeds fixed before the rule
was chosen and never used to choose it (judge on them, do not tune on them).

Per shape and seed (the fake server's draws: latencies, the other client's
bursts, the headers' lies): the achieved rate, requests per minute at the
server between the first and the last accepted request (tokens: reported
usage from the first accepted request to the last answer, less the
one-second burst), over what the shape allows; the share of requests
refused; the wall time; samples lost (infra_error). Printed per shape:
median and min-max over seeds. One JSON line.

Held-out checks: ``--first-seed`` starts the seeds elsewhere, and ``--set
KEY=VALUE`` (repeatable) changes the fake server's setting for the shapes
run (``--only shared --set others_rpm=150``; tokens' allowed rate follows
its ``tpm``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from aioeval.config import decode_config
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites.human_eval.suite import load_problems
from aioeval.testing.executors import ScriptedExecutor
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers

PROBLEMS = load_problems()
RETRY = {"max_attempts": 4, "backoff_base_s": 0.2, "backoff_max_s": 5.0}
LATENCY = (0.15, 0.45)

SHAPES: dict[str, dict[str, Any]] = {
    "told": {
        "fake": {"rpm": 240, "burst": 2, "hints": "none"},
        "rate_limit": {"rpm": 240},
        "requests": 164,
    },
    "window": {
        "fake": {"rpm": 60, "window_s": 60.0, "hints": "retry-after"},
        "requests": 121,
    },
    "shared": {"fake": {"rpm": 300, "burst": 5, "hints": "none", "others_rpm": 100}},
    "slow": {"fake": {"rpm": 120, "burst": 2, "hints": "none", "latency_s": (2.0, 8.0)}},
    "liar": {"fake": {"rpm": 240, "burst": 2, "hints": "liar"}},
    "tokens": {"fake": {"tpm": 60_000, "tpm_counts": "usage", "hints": "none"}},
}


def shared_shape(
    rpm: int, burst: int, share: float, hints: str, latency_s: tuple[float, float] = LATENCY
) -> dict[str, Any]:
    """A key shared with another client taking ``share`` of its ``rpm``."""
    fake = {"rpm": rpm, "burst": burst, "hints": hints, "others_rpm": share * rpm}
    return {"fake": {**fake, "latency_s": latency_s}}


SHAPES |= {
    "shared-b1": shared_shape(240, 1, 0.2, "none"),
    "shared-b2": shared_shape(300, 2, 0.33, "openai"),
    "shared-b10": shared_shape(600, 10, 0.5, "none", (0.5, 1.5)),
    "shared-b2-half": shared_shape(120, 2, 0.5, "none"),
}

HELDOUT_FIRST_SEED = 100
"""Held-out runs use seeds from here (tuning runs use 0 up)."""
HELDOUT: dict[str, dict[str, Any]] = {
    "issue": shared_shape(300, 2, 0.33, "none", (0.3, 0.3)),
    "h-b1-half-openai": shared_shape(300, 1, 0.5, "openai", (0.5, 1.5)),
    "h-b1-third": shared_shape(600, 1, 0.33, "none", (0.1, 0.3)),
    "h-b2-fifth": shared_shape(180, 2, 0.2, "none"),
    "h-b5-half": shared_shape(240, 5, 0.5, "none", (1.0, 3.0)),
    "h-b5-fifth-openai": shared_shape(600, 5, 0.2, "openai"),
    "h-b10-third-openai": shared_shape(300, 10, 0.33, "openai", (0.3, 0.3)),
    "h-b10-fifth": shared_shape(120, 10, 0.2, "none", (0.5, 2.0)),
    **{f"h-{name}": SHAPES[name] for name in ("told", "window", "slow", "liar", "tokens")},
}
"""Fixed before the rule was chosen; judged on, never tuned on."""


async def one_run(name: str, seed: int, root: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    shape = {**SHAPES, **HELDOUT}[name]
    fake_cfg = FakeConfig(**{"latency_s": LATENCY, **shape["fake"], **overrides, "seed": seed})
    requests = shape.get("requests", 164)
    async with FakeOpenAI(fake_cfg, human_eval_answers(PROBLEMS)) as fake:
        target = {
            "mode": "runtime",
            "endpoint": fake.url,
            "model": "fake-model",
            "use_n": False,
            "rate_limit": shape.get("rate_limit", {}),
        }
        params = {
            "allow_code_execution": True,
            "dedup": False,
            "limit": requests,
            "retry": RETRY,
            "sandbox": {"isolation": "minimal"},  # the no-op executor runs nothing
        }
        cfg = decode_config({"target": target, "params": params})
        spec = RunSpec(
            benchmark="human-eval",
            platform="llm-endpoint",
            config=cfg,
            out_dir=str(root / f"{name}-{seed}"),
        )
        t0 = time.perf_counter()
        summary = await evaluate(spec, pool_factory=lambda _c: ScriptedExecutor(size=2))
        wall = time.perf_counter() - t0
    return {
        "ratio": achieved_ratio(fake, fake_cfg, requests),
        "share_429": fake.rate_limited / max(1, fake.requests),
        "wall_s": wall,
        "lost": summary.counts.get("infra_error", 0),
    }


def achieved_ratio(fake: FakeOpenAI, cfg: FakeConfig, requests: int) -> float:
    """Achieved over allowed (see the module docstring)."""
    if cfg.tpm:
        start, end = fake.accepted_at[0], fake.usage_at[-1][0]
        burst = cfg.tpm / 60.0 * cfg.tpm_burst_s
        tokens = sum(n for _, n in fake.usage_at)
        return (tokens - burst) / (end - start) * 60.0 / cfg.tpm
    t = fake.accepted_at
    span = t[-1] - t[0]
    achieved = (len(t) - 1) / span * 60.0
    assert cfg.rpm is not None
    if cfg.window_s:
        per_window = int(cfg.rpm * cfg.window_s / 60.0)
        best_span = (-(-requests // per_window) - 1) * cfg.window_s
        return achieved / ((requests - 1) / best_span * 60.0)
    others = fake.limits.others_taken / span * 60.0 if cfg.others_rpm else 0.0
    return achieved / (cfg.rpm - others)


def spread(values: list[float], digits: int) -> list[float]:
    """[median, min, max]"""
    return [round(statistics.median(values), digits), round(min(values), digits),
            round(max(values), digits)]  # fmt: skip


async def main(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="aioeval-bench-shapes-"))
    names = args.only.split(",") if args.only else list(HELDOUT if args.heldout else SHAPES)
    overrides = {k: json.loads(v) for k, _, v in (kv.partition("=") for kv in args.set)}
    first = HELDOUT_FIRST_SEED if args.heldout else args.first_seed
    seeds = range(first, first + args.seeds)
    out: dict[str, Any] = {"bench": "rate_shapes", "seeds": [seeds.start, seeds.stop - 1],
                           "set": overrides, "loadavg_before": os.getloadavg()}  # fmt: skip
    for name in names:
        runs = [await one_run(name, seed, root, overrides) for seed in seeds]
        out[name] = {
            "ratio": spread([r["ratio"] for r in runs], 3),
            "share_429": spread([r["share_429"] for r in runs], 3),
            "wall_s": spread([r["wall_s"] for r in runs], 1),
            "lost": sum(r["lost"] for r in runs),
        }
    out["loadavg_after"] = os.getloadavg()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help=f"comma-separated subset of {','.join(SHAPES)}")
    parser.add_argument("--seeds", type=int, default=5, help="runs per shape")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first..first+N-1")
    parser.add_argument("--heldout", action="store_true", help="the held-out shapes and seeds")
    parser.add_argument(
        "--set", action="append", default=[], help="KEY=JSON: a fake server setting to change"
    )
    print(json.dumps(anyio.run(main, parser.parse_args())))
