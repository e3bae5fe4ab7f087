"""What a broken or hostile endpoint costs the engine: peak RSS of a run
against the fake server (127.0.0.1) answering normally, against the same
run where some answers are a 600 MB body, an 800 MB body gzip-compressed to
under a megabyte, or a 429 asking to wait 10**20 seconds.

Each case runs in a fresh process (engine and fake server; the peak RSS
is that process's own, and the fake streams what it sends); the
hostile cases' samples end as ``infra_error`` (cause ``oversized``) or,
for the absurd wait, are retried and generated. Target: each hostile
peak within 1.5x of the normal run's, every absurd-wait sample generated.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CASES = {
    "normal": {},
    "huge": {"faults": ["huge", "ok", "huge"], "huge_mb": 600},
    "bomb": {"faults": ["bomb", "ok", "bomb"], "huge_mb": 800},
    "absurd_wait": {"fault_every": {"absurd": 2}},
}

CHILD = """
import json, resource, sys, anyio, aioeval
from aioeval.testing import ScriptedExecutor
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers
from aioeval.suites.human_eval.suite import load_problems

fake_cfg, out, limit = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])

async def main():
    problems = load_problems()[:limit]
    async with FakeOpenAI(FakeConfig(**fake_cfg), human_eval_answers(problems)) as fake:
        cfg = aioeval.load_config(overrides=[
            "target.mode=runtime", f"target.endpoint={fake.url}", "target.model=fake-model",
            f"params.limit={limit}", "params.allow_code_execution=true",
            "params.retry.backoff_base_s=0.01", "params.retry.backoff_max_s=0.05",
            "params.sandbox.isolation=minimal",
        ])
        spec = aioeval.RunSpec(benchmark="human-eval", platform="llm-endpoint", config=cfg, out_dir=out)
        summary = await aioeval.evaluate(spec, pool_factory=lambda _c: ScriptedExecutor())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"counts": summary.counts, "incomplete": summary.incomplete,
                      "peak_rss_mb": round(peak, 1)}))

anyio.run(main)
"""


def run_case(fake_cfg: dict[str, object], limit: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(fake_cfg), out + "/run", str(limit)],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=20)
    args = parser.parse_args()
    figures = {name: run_case(cfg, args.limit) for name, cfg in CASES.items()}
    normal = float(figures["normal"]["peak_rss_mb"])  # type: ignore[arg-type]
    ratios = {
        name: round(float(f["peak_rss_mb"]) / normal, 2)  # type: ignore[arg-type]
        for name, f in figures.items()
        if name != "normal"
    }
    print(json.dumps({"bench": "hostile_endpoint", "cases": figures, "rss_over_normal": ratios}))


if __name__ == "__main__":
    main()
