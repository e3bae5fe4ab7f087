"""aioeval's EvalPlus suites against EvalPlus's own evaluator, on the
project's fixture: per-sample base and plus verdicts, pass@1 and pass@10,
and the wall time of each, in one run.

EvalPlus runs from another interpreter (``--evalplus-python``, with the
``evalplus`` package installed; ``--evalplus-path`` puts a source checkout
first on its path), pointed at the fixture through its dataset override
variables (``HUMANEVAL_OVERRIDE_PATH``, ``MBPP_OVERRIDE_PATH``). Both sides
get the same worker count and per-input time limits; each side runs once
untimed first, so EvalPlus's ground-truth cache and aioeval's are warm.

    python3 bench/evalplus_parity.py --evalplus-python /path/to/venv/bin/python

``--plus-scale N`` repeats every problem's plus inputs N times, in a copy
of the fixture both sides read (the one problem whose inputs are already
large stays as it is), for a run at the size of the real sets:
EvalPlus's paper gives HumanEval+ about 764 tests per problem on average
and MBPP+ about 108; the fixture has 4 to 42.

Prints one JSON line per flavor and scoring mode: samples, disagreements
(with the first few), both sides' pass@k, both wall times and their ratio.
A verdict agrees when the statuses match, where aioeval's ``timeout`` on
one input stands for EvalPlus's ``fail`` (EvalPlus folds a per-input
timeout into a failure) and its ``error`` (the program does not compile)
for ``fail``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import evalplus_fixture  # noqa: E402
import floor  # noqa: E402

from aioeval.metrics import pass_at_k  # noqa: E402

OURS = {"passed": {"pass"}, "failed": {"fail"}, "error": {"fail"}, "timeout": {"fail", "timeout"}}
OVERRIDE = {"humaneval": "HUMANEVAL_OVERRIDE_PATH", "mbpp": "MBPP_OVERRIDE_PATH"}
SUITE = {"humaneval": "humaneval-plus", "mbpp": "mbpp-plus"}


def run_evalplus(args: argparse.Namespace, flavor: str, samples: Path, out: Path) -> float:
    env = dict(os.environ)
    env[OVERRIDE[flavor]] = str(dataset(args, flavor))
    env["XDG_CACHE_HOME"] = str(args.work / "evalplus-cache")
    if args.evalplus_path:
        env["PYTHONPATH"] = args.evalplus_path
    cmd = [
        args.evalplus_python, "-m", "evalplus.evaluate", flavor,
        "--samples", str(samples), "--parallel", str(args.workers),
        "--min_time_limit", str(args.min_time_limit), "--i_just_wanna_run",
    ]  # fmt: skip
    made = [
        samples.with_name(samples.stem + s) for s in ("_eval_results.json", ".eval_results.json")
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    # Its results are complete when the file appears; the process itself
    # lingers up to 20 s more (a watchdog thread that sleeps), not counted.
    while proc.poll() is None and not any(m.exists() for m in made):
        time.sleep(0.01)
    wall = time.perf_counter() - t0
    if proc.wait() != 0:
        raise SystemExit(f"evalplus failed: {' '.join(cmd)}")
    next(m for m in made if m.exists()).replace(out)
    return wall


def dataset(args: argparse.Namespace, flavor: str) -> Path:
    """The fixture file, or its copy with the plus inputs repeated."""
    fixture = ROOT / "fixtures" / "evalplus" / f"{flavor}_plus.jsonl"
    if args.plus_scale == 1:
        return fixture
    scaled = args.work / f"{flavor}_plus_x{args.plus_scale}.jsonl"
    if not scaled.exists():
        rows = [json.loads(line) for line in fixture.read_text().splitlines()]
        for row in rows:
            if len(json.dumps(row["plus_input"])) < 100_000:  # not the big-input problem
                row["plus_input"] = row["plus_input"] * args.plus_scale
        scaled.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return scaled


def run_aioeval(
    args: argparse.Namespace, flavor: str, samples: Path, out: Path, scoring: str
) -> float:
    env = dict(os.environ, AIOEVAL_CACHE_DIR=str(args.work / "aioeval-cache"))
    cmd = [
        sys.executable, "-m", "aioeval", "score", "--benchmark", SUITE[flavor],
        "--samples", str(samples), "--out", str(out), "--quiet",
        "--set", f"params.workers={args.workers}",
        "--set", f"params.scoring={scoring}",
        "--set", f"params.evalplus.min_time_limit_s={args.min_time_limit}",
        "--set", "params.k=[1,10]", "--set", "params.dedup=false",
    ]  # fmt: skip
    if args.plus_scale != 1:
        cmd += ["--dataset", str(dataset(args, flavor))]
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0


def plain_jobs(args: argparse.Namespace, flavor: str, samples: list[dict[str, Any]]) -> Any:
    """Each sample's function over its base and plus inputs, for `floor`."""
    rows = {}
    for line in dataset(args, flavor).read_text().splitlines():
        row = json.loads(line)
        rows[row["task_id"]] = row
    return [
        {
            "mode": "call",
            "code": s["solution"],
            "entry": rows[s["task_id"]]["entry_point"],
            "inputs": rows[s["task_id"]]["base_input"] + rows[s["task_id"]]["plus_input"],
        }
        for s in samples
    ]


def compare(
    samples: list[dict[str, Any]], theirs: dict[str, Any], ours_dir: Path
) -> dict[str, Any]:
    ours = {}
    for line in (ours_dir / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        ours[(r["problem_id"], r["sample_index"])] = r
    index: dict[str, int] = {}
    disagree = []
    for s in samples:
        i = index[s["task_id"]] = index.get(s["task_id"], -1) + 1
        mine = ours[(s["task_id"], i)]["parts"] or {}
        other = theirs["eval"][s["task_id"]][i]
        for part in ("base", "plus"):
            got, want = mine.get(part, "?"), other[f"{part}_status"]
            if want not in OURS.get(got, set()):
                disagree.append(
                    f"{s['task_id']} #{i} {s['kind']} {part}: ours {got}, theirs {want}"
                )
    summary = json.loads((ours_dir / "summary.json").read_text())
    figures = {m["name"].split(".", 1)[1]: m["value"] for m in summary["measurements"]}
    mine_k = {k: round(v, 6) for k, v in figures.items() if "pass_at" in k}
    theirs_k: dict[str, float] = {}
    for k in (1, 10):
        if any(len(rs) < k for rs in theirs["eval"].values()):
            continue  # as aioeval: a k is reported only where every problem has n >= k
        for name, ok in (("", lambda r: r["base_status"] == r["plus_status"] == "pass"),
                         ("base.", lambda r: r["base_status"] == "pass")):  # fmt: skip
            values = [pass_at_k(len(rs), sum(map(ok, rs)), k) for rs in theirs["eval"].values()]
            theirs_k[f"{name}pass_at_{k}"] = round(sum(values) / len(values), 6)
    pass_at = {"ours": mine_k, "theirs": theirs_k, "same": mine_k == theirs_k}
    return {"disagreements": len(disagree), "first": disagree[:8], "pass_at": pass_at}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evalplus-python", required=True)
    parser.add_argument("--evalplus-path", default="", help="a source checkout, first on its path")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--min-time-limit", type=float, default=1.0)
    parser.add_argument("--stall-s", type=float, default=3.0, help="the stalling samples' sleep")
    parser.add_argument("--flavors", default="humaneval,mbpp")
    parser.add_argument("--scoring", default="strict,official")
    parser.add_argument("--without", default="", help="sample kinds to leave out, e.g. stall")
    parser.add_argument("--repeat", type=int, default=1, help="each problem's samples, n times")
    parser.add_argument("--plus-scale", type=int, default=1, help="each plus input, n times")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aioeval-evalplus-") as tmp:
        args.work = Path(tmp)
        paths = evalplus_fixture.write_samples(args.work, args.stall_s)
        left_out = set(args.without.split(",")) - {""}
        for flavor in args.flavors.split(","):
            samples = [json.loads(x) for x in paths[flavor].read_text().splitlines()]
            samples = [s for s in samples if s["kind"] not in left_out]
            samples = [s for s in samples for _ in range(args.repeat)]
            paths[flavor].write_text("".join(json.dumps(s) + "\n" for s in samples))
            run_evalplus(args, flavor, paths[flavor], args.work / "warm.json")
            cpu0 = floor.children_cpu()
            theirs_wall = run_evalplus(args, flavor, paths[flavor], args.work / f"{flavor}.json")
            theirs_cpu = floor.children_cpu() - cpu0
            plain = floor.measure(plain_jobs(args, flavor, samples), args.min_time_limit)
            theirs = json.loads((args.work / f"{flavor}.json").read_text())
            for scoring in args.scoring.split(","):
                run_aioeval(
                    args, flavor, paths[flavor], args.work / f"warm-{flavor}-{scoring}", scoring
                )
                out = args.work / f"{flavor}-{scoring}"
                cpu0 = floor.children_cpu()
                ours_wall = run_aioeval(args, flavor, paths[flavor], out, scoring)
                ours_cpu = floor.children_cpu() - cpu0
                row = {
                    "flavor": flavor,
                    "scoring": scoring,
                    "samples": len(samples),
                    "left_out": sorted(left_out),
                    "plus_scale": args.plus_scale,
                    **compare(samples, theirs, out),
                    "evalplus_wall_s": round(theirs_wall, 2),
                    "aioeval_wall_s": round(ours_wall, 2),
                    "speedup": round(theirs_wall / ours_wall, 2),
                    "cpu_s": {"evalplus": round(theirs_cpu, 2), "aioeval": round(ours_cpu, 2)},
                    "floor": floor.floor(plain, args.workers, theirs_wall),
                    "load": round(os.getloadavg()[0], 1),
                }
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
