"""aioeval's ``livecodebench`` suite against LiveCodeBench's own evaluator,
on the same problems and answers: per-answer verdicts, pass@1, and the wall
time of each, in one run.

Upstream runs in this interpreter, imported from ``--lcb-source DIR`` (a
checkout or export of the LiveCodeBench repository; nothing of it is
copied here): ``lcb_runner.evaluation.codegen_metrics``, the function its
custom evaluator calls, with ``num_process_evaluate`` = ``--workers`` and
``timeout`` = ``--timeout``. Importing it needs numpy, pandas and tqdm
(``pip install numpy pandas tqdm``). aioeval runs as ``aioeval score
--benchmark livecodebench --dataset ... --samples ...`` with
``params.workers`` = ``--workers`` and ``test_timeout_s`` = ``--timeout``,
interpreter start included (upstream's wall starts after its import). Each
scoring mode runs upstream, then aioeval, so both see the same load.

Problems and answers come from `lcb_data` (written for this bench:
stdin and ``class Solution`` problems; right answers in many shapes, wrong
ones, runtime errors, answers that stall past the limit); both sides get
them in their own format (a release JSONL with upstream's custom-output
file for aioeval, ``input_output`` sample dicts for upstream). Both sides
wait the stalling answers out (``--stall-every 0`` leaves them out).

    python bench/lcb_parity.py --lcb-source /path/to/LiveCodeBench

Upstream runs the answers under its own guard, not aioeval's sandbox: the
bench gives it only the answers `lcb_answers` holds (no model output, no
fork or memory bombs).

Prints one JSON line per scoring mode (``strict``, the default, and
``official``): answers, disagreements (with the first few), both sides'
pass@1, both walls and their ratio. A verdict is one of ``passed``,
``wrong``, ``error``, ``timeout``: upstream's per-answer result and error
code (True everywhere; -2 wrong answer; -4 runtime or load error; -3 time
limit), and aioeval's status, where ``failed`` covers a wrong answer and a
program that raises (the reason tells them apart) and ``official``
scoring reports a test past its limit as ``failed`` (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import floor
import lcb_data

Key = tuple[str, int]
UPSTREAM_CODES = {-2: "wrong", -3: "timeout", -4: "error"}


def write_inputs(problems: list[lcb_data.LcbProblem], work: Path) -> tuple[Path, Path]:
    """The release-shaped dataset and upstream's custom-output samples file."""
    dataset, samples = work / "lcb_bench.jsonl", work / "lcb_bench_outputs.json"
    dataset.write_text("".join(json.dumps(lcb_data.release_row(p)) + "\n" for p in problems))
    rows = [
        {"question_id": p.question_id, "code_list": [c for c, _ in p.answers]} for p in problems
    ]
    samples.write_text(json.dumps(rows))
    return dataset, samples


def run_ours(
    dataset: Path, samples: Path, out: Path, *, scoring: str, workers: int, timeout: float
) -> tuple[dict[Key, str], float, float]:
    """aioeval's verdict per answer, its pass@1 and its wall time."""
    cmd = [
        sys.executable, "-m", "aioeval", "score", "--benchmark", "livecodebench",
        "--dataset", str(dataset), "--samples", str(samples), "--out", str(out), "--quiet",
        "--set", f"params.workers={workers}", "--set", f"params.scoring={scoring}",
        "--set", f"params.livecodebench.test_timeout_s={timeout}",
        "--set", "params.k=[1]", "--set", "params.dedup=false",
    ]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"aioeval score failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    verdicts = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        verdicts[(row["problem_id"], row["sample_index"])] = row["status"]
    summary = json.loads((out / "summary.json").read_text())
    pass_1 = next(
        m["value"] for m in summary["measurements"] if m["name"] == "livecodebench.pass_at_1"
    )
    return verdicts, pass_1, wall


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Upstream prints progress and its workers' alarms on fd 1; this
    script's stdout carries only its JSON lines."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def load_upstream(source: Path) -> Any:
    """Upstream's ``codegen_metrics``, imported from its source tree."""
    if not (source / "lcb_runner" / "evaluation" / "compute_code_generation_metrics.py").is_file():
        raise SystemExit(
            f"--lcb-source {source}: no LiveCodeBench source there (lcb_runner/evaluation/)"
        )
    sys.path.insert(0, str(source))
    os.environ.setdefault("TQDM_DISABLE", "1")
    try:
        from lcb_runner.evaluation import codegen_metrics  # type: ignore[import-not-found]
    except ImportError as exc:
        raise SystemExit(
            f"--lcb-source {source}: cannot import upstream's evaluator: {exc}"
        ) from None
    return codegen_metrics


def upstream_verdict(result: list[Any], metadata: str) -> str:
    if all(r is True or (not isinstance(r, bool) and r > 0) for r in result):
        return "passed"
    code = json.loads(metadata).get("error_code")
    return UPSTREAM_CODES.get(code, f"code {code}")


def run_upstream(
    codegen_metrics: Any, problems: list[lcb_data.LcbProblem], *, workers: int, timeout: int
) -> tuple[dict[Key, str], float, float]:
    """Upstream's verdict per answer, its pass@1 and its wall time."""
    samples = [lcb_data.upstream_sample(p) for p in problems]
    generations = [[c for c, _ in p.answers] for p in problems]
    with _stdout_to_stderr():
        t0 = time.perf_counter()
        metrics, results, metadata = codegen_metrics(
            samples, generations, k_list=[1], num_process_evaluate=workers, timeout=timeout
        )
        wall = time.perf_counter() - t0
    verdicts = {}
    for index, problem in enumerate(problems):
        for answer, (result, meta) in enumerate(zip(results[index], metadata[index], strict=True)):
            verdicts[(problem.question_id, answer)] = upstream_verdict(result, meta)
    return verdicts, float(metrics["pass@1"]), wall


def plain_jobs(problems: list[lcb_data.LcbProblem]) -> list[dict[str, Any]]:
    """Each answer over its problem's test inputs, for `floor`."""
    return [
        {
            "mode": "stdin" if p.func_name is None else "method",
            "code": code,
            "entry": p.func_name or "",
            "inputs": [i for i, _ in p.tests],
        }
        for p in problems
        for code, _ in p.answers
    ]


def same(ours: str, theirs: str, scoring: str) -> bool:
    """Whether aioeval's status is upstream's verdict (see the docstring)."""
    if ours == "failed":
        return theirs in ("wrong", "error") or (theirs == "timeout" and scoring == "official")
    return ours == theirs


def compare(
    problems: list[lcb_data.LcbProblem], ours: dict[Key, str], theirs: dict[Key, str], scoring: str
) -> list[str]:
    out = []
    for p in problems:
        for i, (_, label) in enumerate(p.answers):
            key = (p.question_id, i)
            if not same(ours[key], theirs[key], scoring):
                out.append(
                    f"{p.question_id} #{i} ({label}): ours {ours[key]}, theirs {theirs[key]}"
                )
    return out


def counts(verdicts: dict[Key, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in verdicts.values():
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lcb-source", type=Path, required=True, help="LiveCodeBench checkout")
    parser.add_argument("--problems", type=int, default=64)
    parser.add_argument("--tests", type=int, default=8, help="tests per problem (1 public)")
    parser.add_argument(
        "--stall-every", type=int, default=lcb_data.STALL_EVERY, help="0: no stalling answers"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=2, help="seconds per test, both sides")
    parser.add_argument("--modes", default="strict,official")
    args = parser.parse_args()
    codegen_metrics = load_upstream(args.lcb_source.resolve())
    problems = lcb_data.make(args.problems, args.tests, stall_every=args.stall_every)
    with tempfile.TemporaryDirectory(prefix="lcb-parity-") as tmp:
        work = Path(tmp)
        dataset, samples = write_inputs(problems, work)
        plain = floor.measure(plain_jobs(problems), args.timeout)
        for scoring in args.modes.split(","):
            cpu0 = floor.children_cpu()
            theirs, their_pass, their_wall = run_upstream(
                codegen_metrics, problems, workers=args.workers, timeout=args.timeout
            )
            cpu1 = floor.children_cpu()
            ours, our_pass, our_wall = run_ours(
                dataset, samples, work / f"ours-{scoring}", scoring=scoring,
                workers=args.workers, timeout=args.timeout,
            )  # fmt: skip
            cpu2 = floor.children_cpu()
            disagree = compare(problems, ours, theirs, scoring)
            line = {
                "bench": "lcb_parity",
                "scoring": scoring,
                "problems": len(problems),
                "answers": len(ours),
                "tests_per_problem": args.tests,
                "workers": args.workers,
                "timeout_s": args.timeout,
                "disagreements": len(disagree),
                "first": disagree[:8],
                "verdicts": {"ours": counts(ours), "theirs": counts(theirs)},
                "pass_at_1": {
                    "ours": round(our_pass, 9),
                    "theirs": round(their_pass, 9),
                    "same": round(our_pass, 9) == round(their_pass, 9),
                },
                "wall_s": {"ours": round(our_wall, 2), "theirs": round(their_wall, 2)},
                "ratio": round(their_wall / our_wall, 2),
                "cpu_s": {"ours": round(cpu2 - cpu1, 2), "theirs": round(cpu1 - cpu0, 2)},
                "floor": floor.floor(plain, args.workers, their_wall),
                "load": round(os.getloadavg()[0], 1),
            }
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
