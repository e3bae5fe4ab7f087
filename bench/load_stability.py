"""Verdicts must not depend on machine load.

Scores the real Code Llama CRUXEval generations (official mode, both tasks
unless --tasks says otherwise) and the 164 HumanEval canonical solutions
twice: once as the machine is, and once with CPU-hog processes keeping every
core busy (2 per core by default). The timeout is a CPU-time budget with a
wall-clock backstop, so a loaded machine should flip nothing. Prints one
JSON line with the number of verdicts that differ.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import msgspec
import orjson

import aioeval
from aioeval.config import load_config
from aioeval.types import CandidateResult

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cruxeval"


async def score_all(tmp: Path, tag: str, tasks: list[str]) -> tuple[dict[str, str], float]:
    verdicts: dict[str, str] = {}
    t0 = time.perf_counter()
    jobs: list[tuple[str, aioeval.RunSpec]] = []
    he = load_config(overrides=["params.execute=true"])
    jobs.append(
        (
            "human-eval",
            aioeval.RunSpec(benchmark="human-eval", config=he, out_dir=str(tmp / f"{tag}-he")),
        )
    )
    for task in tasks:
        cfg = load_config(
            overrides=["params.scoring=official", f"params.dataset_path={DATA / 'cruxeval.jsonl'}"]
        )
        gens = DATA / "codellama-7b-temp0.2" / f"generations_{task}.json"
        jobs.append(
            (
                f"cruxeval-{task[0]}",
                aioeval.RunSpec(
                    benchmark=f"cruxeval-{task[0]}",
                    config=cfg,
                    out_dir=str(tmp / f"{tag}-{task}"),
                    samples=str(gens),
                ),
            )
        )
    for name, spec in jobs:
        await aioeval.evaluate(spec)
        dec = msgspec.json.Decoder(CandidateResult)
        assert spec.out_dir is not None
        for line in (Path(spec.out_dir) / "results.jsonl").read_bytes().splitlines():
            r = dec.decode(line)
            verdicts[f"{name}:{r.problem_id}:{r.sample_index}"] = r.status
    return verdicts, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hogs-per-core", type=int, default=2)
    ap.add_argument("--tasks", default="output,input")
    args = ap.parse_args()
    if not (DATA / "cruxeval.jsonl").exists():
        sys.exit(f"needs the real data at {DATA}")
    tasks = [t for t in args.tasks.split(",") if t]
    with tempfile.TemporaryDirectory() as tmp:
        idle, idle_s = anyio.run(score_all, Path(tmp), "idle", tasks)
        n_hogs = args.hogs_per_core * (os.cpu_count() or 1)
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n_hogs)]
        try:
            loaded, loaded_s = anyio.run(score_all, Path(tmp), "loaded", tasks)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    differ = sorted(k for k in idle if idle[k] != loaded.get(k))
    print(
        orjson.dumps(
            {
                "bench": "load_stability",
                "verdicts": len(idle),
                "differ": len(differ),
                "examples": [f"{k}: {idle[k]} -> {loaded.get(k)}" for k in differ[:10]],
                "cpu_hogs": n_hogs,
                "idle_wall_s": round(idle_s, 2),
                "loaded_wall_s": round(loaded_s, 2),
                "timeouts_idle": sum(v == "timeout" for v in idle.values()),
                "timeouts_loaded": sum(v == "timeout" for v in loaded.values()),
            }
        ).decode()
    )


if __name__ == "__main__":
    main()
