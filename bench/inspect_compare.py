"""aioeval against inspect_ai on every limit shape of ``bench/rate_shapes.py``
that neither is told (``told`` tells aioeval only): HumanEval prompts, one
completion each, generation only, against the fake OpenAI server
(`aioeval.testing.fake_openai`) on 127.0.0.1.

inspect_ai runs from another interpreter (``--inspect-python``, with the
``inspect-ai`` and ``openai`` packages installed), as a user runs it: the
``inspect eval`` CLI on a task file written to a temporary directory (the
shape's prompts as the very chat messages aioeval sends (the suite's system
and user message), the ``generate()`` solver, no scorer), model
``openai/fake-model``, ``--model-base-url`` at the fake, a dummy
``OPENAI_API_KEY``, its retry settings left at their defaults. Its
proxy variables point at a closed port on 127.0.0.1 (``NO_PROXY`` the fake),
so nothing it might fetch leaves the machine. aioeval runs the engine's
llm-endpoint generation with a no-op sandbox (`ScriptedExecutor`), as
``bench/rate_shapes.py`` does. Both sides get the same
cap on requests in flight (``--max-connections``: inspect's
``--max-connections``, aioeval's ``target.rate_limit.max_concurrency``);
``--inspect-defaults`` leaves inspect's connection settings alone instead
(its adaptive concurrency, 10-100 from 20).

    python bench/inspect_compare.py --inspect-python /path/to/venv/bin/python \
        [--only shared,shared-b2] [--heldout]

Every figure is counted at the server: ``wall_s`` from the first
request to the last answer (neither side's start-up), ``n_429`` and
``share_429`` 429s (over generation requests), ``tokens`` the usage
reported (the same messages on both sides), ``share_left`` the rate
achieved over what the shape allows (``rate_shapes``' ratio: on a shared key,
the rate less what the other client took), ``unanswered`` prompts the
server never answered and ``aborted`` requests let through whose answer was
never sent; ``process_s`` is each side's own run (aioeval's evaluate(),
inspect's process with its start-up). Per shape, one JSON line: each side's
median and [min, max] over the seeds (the fake's draws), and the ratios of
the medians (aioeval over inspect); the target is ``ratio_wall`` <= 1 and
``ratio_429`` <= 0.5.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from aioeval.config import Params, decode_config
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites.human_eval.suite import HumanEval, load_problems
from aioeval.testing.executors import ScriptedExecutor
from aioeval.testing.fake_openai import Answerer, FakeConfig, FakeOpenAI, human_eval_answers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rate_shapes import HELDOUT, HELDOUT_FIRST_SEED, LATENCY, RETRY, SHAPES, achieved_ratio

PROBLEMS = load_problems()
MODEL = "fake-model"

TASK = """\
from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.solver import generate


@task
def human_eval_generate():
    return Task(dataset=json_dataset({dataset!r}), solver=generate())
"""


class Served:
    """The fake's answerer, noting the time of the last answer and which
    prompts were answered."""

    def __init__(self, inner: Answerer) -> None:
        self.inner = inner
        self.prompts: set[str] = set()
        self.last = 0.0

    def __call__(self, text: str, sample: int) -> str:
        self.prompts.add(text)
        self.last = time.monotonic()
        return self.inner(text, sample)


def figures(
    fake: FakeOpenAI, cfg: FakeConfig, served: Served, prompts: int, process_s: float
) -> dict[str, Any]:
    return {
        "wall_s": served.last - fake.accepted_at[0] if fake.accepted_at else float("nan"),
        "requests": fake.requests,
        "n_429": fake.rate_limited,
        "share_429": fake.rate_limited / max(1, fake.requests),
        "share_left": achieved_ratio(fake, cfg, prompts),
        "tokens": fake.tokens,
        "unanswered": prompts - len(served.prompts),
        "aborted": len(fake.accepted_at) - fake.served,
        "max_in_flight": fake.max_in_flight,
        "process_s": process_s,
    }


def shape_of(name: str) -> dict[str, Any]:
    return {**SHAPES, **HELDOUT}[name]


def fake_config(name: str, seed: int) -> FakeConfig:
    return FakeConfig(**{"latency_s": LATENCY, **shape_of(name)["fake"], "seed": seed})


async def run_aioeval(args: argparse.Namespace, name: str, seed: int) -> dict[str, Any]:
    served = Served(human_eval_answers(PROBLEMS))
    prompts = shape_of(name).get("requests", len(PROBLEMS))
    cfg_fake = fake_config(name, seed)
    async with FakeOpenAI(cfg_fake, served) as fake:
        limit = {**shape_of(name).get("rate_limit", {}), "max_concurrency": args.max_connections}
        target = {
            "mode": "runtime",
            "endpoint": fake.url,
            "model": MODEL,
            "use_n": False,
            "rate_limit": limit,
        }
        params = {
            "allow_code_execution": True,
            "dedup": False,
            "limit": prompts,
            "retry": RETRY,
            "sandbox": {"isolation": "minimal"},  # the no-op executor runs nothing
        }
        cfg = decode_config({"target": target, "params": params})
        out_dir = args.work / f"aioeval-{name}-{seed}"
        spec = RunSpec(
            benchmark="human-eval", platform="llm-endpoint", config=cfg, out_dir=str(out_dir)
        )
        t0 = time.perf_counter()
        await evaluate(spec, pool_factory=lambda _c: ScriptedExecutor(size=2))
        process_s = time.perf_counter() - t0
    return figures(fake, cfg_fake, served, prompts, process_s)


async def run_inspect(args: argparse.Namespace, name: str, seed: int) -> dict[str, Any]:
    served = Served(human_eval_answers(PROBLEMS))
    prompts = shape_of(name).get("requests", len(PROBLEMS))
    log_dir = args.work / f"inspect-{name}-{seed}"
    cfg_fake = fake_config(name, seed)
    async with FakeOpenAI(cfg_fake, served) as fake:
        trap = "http://127.0.0.1:9"  # closed: a fetch from elsewhere fails here
        env = dict(os.environ, OPENAI_API_KEY="dummy", INSPECT_LOG_DIR=str(log_dir))
        env.update(HTTP_PROXY=trap, HTTPS_PROXY=trap, ALL_PROXY=trap, NO_PROXY="127.0.0.1")
        env.update(http_proxy=trap, https_proxy=trap, all_proxy=trap, no_proxy="127.0.0.1")
        env.pop("OPENAI_BASE_URL", None)
        cmd = [
            args.inspect_python, "-m", "inspect_ai", "eval", "task.py",
            "--model", f"openai/{MODEL}", "--model-base-url", fake.url,
            "-M", "responses_api=false",  # the fake serves chat completions, not /responses
            "--display", "none", "--log-dir", str(log_dir), "--log-format", "json",
            "--limit", str(prompts),
        ]  # fmt: skip
        if not args.inspect_defaults:
            cmd += ["--max-connections", str(args.max_connections)]
        t0 = time.perf_counter()
        proc = await anyio.run_process(
            cmd, env=env, cwd=args.work, check=False, stdin=subprocess.DEVNULL
        )
        process_s = time.perf_counter() - t0
    logs = sorted(log_dir.glob("*.json"))
    status = json.loads(logs[-1].read_text()) if logs else {}
    if proc.returncode != 0 or status.get("status") != "success":
        why = (status.get("error") or {}).get("message") or (proc.stderr or proc.stdout)
        why = why if isinstance(why, str) else why.decode(errors="replace")[-2000:]
        raise SystemExit(f"inspect eval failed ({proc.returncode}): {' '.join(cmd)}\n{why}")
    return figures(fake, cfg_fake, served, prompts, process_s)


def spread(values: list[float], digits: int) -> list[float]:
    """[median, min, max]"""
    return [round(statistics.median(values), digits), round(min(values), digits),
            round(max(values), digits)]  # fmt: skip


def side(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "wall_s": spread([r["wall_s"] for r in runs], 1),
        "n_429": spread([r["n_429"] for r in runs], 0),
        "share_429": spread([r["share_429"] for r in runs], 3),
        "share_left": spread([r["share_left"] for r in runs], 3),
        "tokens": spread([r["tokens"] for r in runs], 0),
        "requests": spread([r["requests"] for r in runs], 0),
        "unanswered": sum(r["unanswered"] for r in runs),
        "aborted": sum(r["aborted"] for r in runs),
        "max_in_flight": max(r["max_in_flight"] for r in runs),
        "process_s": spread([r["process_s"] for r in runs], 1),
    }


def inspect_version(python: str) -> str:
    code = "import importlib.metadata as m; print(m.version('inspect_ai'), m.version('openai'))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    inspect_v, openai_v = out.stdout.split()
    return f"inspect_ai {inspect_v}, openai {openai_v}"


async def compare(args: argparse.Namespace, name: str, versions: str) -> dict[str, Any]:
    ours: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    first = HELDOUT_FIRST_SEED if args.heldout else 0
    for seed in range(first, first + args.seeds):
        ours.append(await run_aioeval(args, name, seed))
        theirs.append(await run_inspect(args, name, seed))
    a, i = side(ours), side(theirs)
    return {
        "bench": "inspect_compare",
        "shape": name,
        "fake": {k: v for k, v in shape_of(name)["fake"].items()},
        "max_connections": args.max_connections,
        "inspect_connections": "its defaults" if args.inspect_defaults else args.max_connections,
        "seeds": [first, first + args.seeds - 1],
        "inspect": versions,
        "aioeval": a,
        "inspect_ai": i,
        "ratio_429": round(a["n_429"][0] / i["n_429"][0], 3) if i["n_429"][0] else None,
        "ratio_wall": round(a["wall_s"][0] / i["wall_s"][0], 3),
        "loadavg": [round(x, 2) for x in (*load_before[:1], *os.getloadavg()[:1])],
    }


async def main(args: argparse.Namespace) -> None:
    args.work = Path(tempfile.mkdtemp(prefix="aioeval-bench-inspect-"))
    dataset = args.work / "prompts.jsonl"
    suite = HumanEval(Params())
    rows = [{"id": p.id, "input": suite.prompt(p).messages} for p in PROBLEMS]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (args.work / "task.py").write_text(TASK.format(dataset=str(dataset)))
    versions = inspect_version(args.inspect_python)
    names = args.only.split(",") if args.only else list(HELDOUT if args.heldout else SHAPES)
    for name in names:
        print(json.dumps(await compare(args, name, versions)), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inspect-python", required=True, help="python with inspect-ai installed")
    parser.add_argument("--seeds", type=int, default=3, help="runs per shape")
    parser.add_argument("--only", default="", help="comma-separated shapes of rate_shapes.py")
    parser.add_argument(
        "--heldout", action="store_true", help="rate_shapes' held-out shapes, seeds"
    )
    parser.add_argument("--max-connections", type=int, default=10, help="both sides' cap")
    parser.add_argument(
        "--inspect-defaults", action="store_true", help="inspect's own connection settings"
    )
    anyio.run(main, parser.parse_args())
