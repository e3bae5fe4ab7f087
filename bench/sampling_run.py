"""Flat memory on large pass@k sampling runs.

Runs the real CLI (``aioeval run --platform llm-endpoint``) against the fake
OpenAI server for all 164 HumanEval problems at n = 20 and n = 200 (32,800
candidates), and reads each engine process's peak RSS from ``wait4``. The
server answers sample i of a problem with one of 10 variants (canonical or
wrong, each tagged), so the sandbox executes 1,640 distinct programs and
dedup reuses the rest, while every one of the 32,800 results still flows
through the pipeline and the journal.

Prints one JSON line: peak RSS of each run, their ratio (target <= 1.3),
wall time and candidates per second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import orjson

from aioeval.suites.human_eval.suite import load_problems
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI

VARIANTS = 10


def answerer() -> object:
    table = [(p.fields["prompt"], p.fields["canonical_solution"]) for p in load_problems()]

    def answer(text: str, sample: int) -> str:
        for prompt, solution in table:
            if prompt in text:
                v = sample % VARIANTS
                body = solution if v % 2 == 0 else "    return None\n"
                return f"```python\n{prompt}{body}# variant {v}\n```\n"
        return "pass"

    return answer


class ServerThread:
    """The fake server on its own event loop, so the engine is measured alone."""

    def __init__(self) -> None:
        self.url = ""
        self.requests = 0
        self._ready = threading.Event()
        self._stop: anyio.Event | None = None
        self._thread = threading.Thread(target=lambda: anyio.run(self._main), daemon=True)

    async def _main(self) -> None:
        self._stop = anyio.Event()
        async with FakeOpenAI(FakeConfig(latency_s=(0.01, 0.05)), answerer()) as fake:  # type: ignore[arg-type]
            self.url = fake.url
            self._ready.set()
            while not self._stop.is_set():
                self.requests = fake.requests
                await anyio.sleep(0.05)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        self._ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stop is not None
        self._stop.set()
        self._thread.join(10)


def run(url: str, n: int, out: Path) -> dict[str, float]:
    cfg = {
        "target": {
            "mode": "runtime",
            "endpoint": url,
            "model": "fake-model",
            "rate_limit": {"max_concurrency": 8},
        },
        "params": {"allow_code_execution": True, "n_samples": n, "k": [1, 10, 100]},
    }
    path = out.with_suffix(".yaml")
    path.write_text(json.dumps(cfg))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [
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
        ],
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"engine exited with status {status}")
    summary = json.loads((out / "summary.json").read_text())
    return {
        "n": n,
        "candidates": summary["candidates"],
        "executions": summary["executions"],
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "wall_s": round(wall, 2),
        "candidates_per_s": round(summary["candidates"] / wall, 1),
        "pass_at_1": next(
            m["value"] for m in summary["measurements"] if m["name"].endswith("pass_at_1")
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=20)
    ap.add_argument("--large", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ServerThread() as server:
        small = run(server.url, args.small, Path(tmp) / "small")
        large = run(server.url, args.large, Path(tmp) / "large")
    print(
        orjson.dumps(
            {
                "bench": "sampling_run",
                "small": small,
                "large": large,
                "rss_ratio_large_over_small": round(large["peak_rss_mb"] / small["peak_rss_mb"], 3),
                "target_rss_mb": 300,
                "target_ratio": 1.3,
            }
        ).decode()
    )


if __name__ == "__main__":
    main()
