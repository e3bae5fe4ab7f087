"""Chat answers judged as written: aioeval's extractor beside EvalPlus's
sanitizer, per answer style, every answer run in the sandbox.

The corpus (``--corpus FILE``, JSONL) has one answer per line: ``suite``
(``human-eval``, ``mbpp``, ``livecodebench``, ``humaneval-plus``,
``mbpp-plus``), ``task_id``, ``style``, ``correct`` (does the program the
answer means pass?) and ``answer`` (the raw chat text). The default corpus
is ``bench/data/extraction_corpus.jsonl`` (``bench/make_extraction_corpus.py``).

- aioeval: ``aioeval score --set params.extract=true`` on the raw answers.
- EvalPlus: ``evalplus.sanitize.sanitize(answer, entrypoint)`` in the
  interpreter given by ``--evalplus-python`` (a venv with the ``evalplus``
  package), then ``aioeval score`` on what it returns, as given.

An answer is judged as written when a correct one passes and a wrong one
does not. Prints one JSON line: per side the share of correct answers
passed and of wrong answers failed, overall and per style, and aioeval's
first misses.

    python3 bench/extraction.py [--corpus FILE] [--evalplus-python PY]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "data" / "extraction_corpus.jsonl"
SANITIZE = """
import json, sys
from evalplus.sanitize import sanitize
out = []
for answer, entry in json.load(sys.stdin):
    try:
        out.append(sanitize(answer, entry))
    except Exception:
        out.append("")
json.dump(out, sys.stdout)
"""


def entry_points(rows: list[dict[str, Any]]) -> list[str | None]:
    """The entry point EvalPlus's sanitizer is told, per row (None: a stdin program)."""
    from aioeval.suites import targets
    from aioeval.suites.human_eval.suite import load_problems
    from aioeval.suites.livecodebench import data as lcb_data
    from aioeval.suites.mbpp import data as mbpp_data

    humaneval = {p.id: p.fields["entry_point"] for p in load_problems()}
    mbpp = {
        p.id: targets.mbpp(p, mbpp_data.tests_of(p)).entry[0] for p in mbpp_data.fixture_problems()
    }
    lcb = {p.id: targets.livecodebench(p).entry for p in lcb_data.fixture_problems()}
    out: list[str | None] = []
    for r in rows:
        if r["suite"] in ("human-eval", "humaneval-plus"):
            out.append(humaneval.get(r["task_id"]))
        elif r["suite"] in ("mbpp", "mbpp-plus"):
            out.append(mbpp.get(str(r["task_id"])))
        else:
            entry = lcb.get(r["task_id"], ())
            out.append(entry[0] if entry else None)
    return out


def sanitized(python: str, rows: list[dict[str, Any]]) -> list[str]:
    pairs = list(zip((r["answer"] for r in rows), entry_points(rows), strict=True))
    done = subprocess.run(
        [python, "-c", SANITIZE],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"evalplus sanitize failed: {done.stderr[-2000:]}")
    result: list[str] = json.loads(done.stdout)
    return result


def score(rows: list[dict[str, Any]], texts: list[str], extract: bool, work: Path) -> list[str]:
    """The status of each text, scored per suite with ``aioeval score``."""
    statuses = [""] * len(rows)
    by_suite: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_suite[r["suite"]].append(i)
    for suite, indices in by_suite.items():
        samples = work / f"{suite}-{extract}.jsonl"
        where: dict[tuple[str, int], int] = {}
        seen: dict[str, int] = defaultdict(int)
        with samples.open("w") as fh:
            for i in indices:
                tid = str(rows[i]["task_id"])
                where[(tid, seen[tid])] = i
                seen[tid] += 1
                fh.write(json.dumps({"task_id": rows[i]["task_id"], "completion": texts[i]}) + "\n")
        out = work / f"out-{suite}-{extract}"
        cmd = [sys.executable, "-m", "aioeval", "score", "--benchmark", suite]
        cmd += ["--samples", str(samples), "--out", str(out), "--quiet"]
        if extract:
            cmd += ["--set", "params.extract=true"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise SystemExit(f"aioeval score {suite} failed: {done.stderr[-2000:]}")
        for line in (out / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            statuses[where[(str(r["problem_id"]), r["sample_index"])]] = r["status"]
    return statuses


def shares(rows: list[dict[str, Any]], statuses: list[str]) -> dict[str, Any]:
    """Correct answers passed and wrong answers not passed, overall and per style."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r, status in zip(rows, statuses, strict=True):
        for key in ("all", r["style"]):
            t = tally[key]
            if r["correct"]:
                t[0] += 1
                t[1] += status == "passed"
            else:
                t[2] += 1
                t[3] += status != "passed"
    return {
        k: {
            "correct_passed": round(t[1] / t[0], 4) if t[0] else None,
            "wrong_failed": round(t[3] / t[2], 4) if t[2] else None,
            "n": t[0] + t[2],
        }
        for k, t in sorted(tally.items())
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--evalplus-python", help="an interpreter with evalplus installed")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.corpus.read_text().splitlines() if line.strip()]
    figures: dict[str, Any] = {"corpus": str(args.corpus), "answers": len(rows)}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        start = time.monotonic()
        ours = score(rows, [r["answer"] for r in rows], True, work)
        figures["aioeval_wall_s"] = round(time.monotonic() - start, 1)
        figures["aioeval"] = shares(rows, ours)
        figures["aioeval_misses"] = [
            {k: rows[i][k] for k in ("suite", "task_id", "style", "correct")} | {"status": s}
            for i, s in enumerate(ours)
            if (s == "passed") != rows[i]["correct"]
        ][:20]
        if args.evalplus_python:
            theirs = score(rows, sanitized(args.evalplus_python, rows), False, work)
            figures["evalplus_sanitize"] = shares(rows, theirs)
        else:
            figures["evalplus_sanitize"] = "not run (no --evalplus-python)"
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
