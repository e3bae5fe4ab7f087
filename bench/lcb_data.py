"""Problems and answers for `bench/lcb_parity.py`, written for aioeval.

Eight problem kinds, four that read stdin and four LeetCode-style
``class Solution`` methods, each made as many times as asked with fresh
test data (a seeded ``random``). Every problem has one public test, then
private ones, the last of them large, and eight answers, each
labelled with the verdict LiveCodeBench's rules give it:

- ``passed``: right answers in several shapes: ``input()``,
  ``sys.stdin.read()``, ``sys.stdin.buffer``, ``sys.stdin.readlines()``,
  a main guard, trailing spaces and ``\\r``, extra blank lines
  at the end, decimals written differently (``2.5`` for ``2.5000000000``,
  ``3.0`` for ``3``, two spaces between numbers), a tuple for a list, ``1``
  for ``True``, a ``float`` equal to the ``int`` expected;
- ``wrong``: a wrong value, a blank line inside the output, words in
  another case, too few decimals, and ``open(0).read()`` (upstream's star
  import of ``builtins`` binds ``open`` before its ``mock_open`` patch, so
  the program reads the process's own empty stdin);
- ``error``: an exception, a syntax error, a missing method, iterating
  ``sys.stdin`` (upstream's stand-in cannot be iterated), a stdin program
  that defines ``class Solution`` (upstream's loader then looks for it on
  the module);
- ``timeout``: on every tenth problem the last answer stalls on the large
  test (a sleep, or a busy loop) past the time limit.

`make` returns the problems; `release_row` writes one in the release
files' shape (hidden tests pickled, compressed and base64-encoded, as the
release stores them) and `upstream_sample` in the shape upstream's
``codegen_metrics`` takes (``get_evaluation_sample``: public then private).
"""

from __future__ import annotations

import base64
import json
import pickle
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lcb_answers import FUNCTIONAL, STDIN, Kind

BIG = 2000
"""Size of each problem's last, large test (the one stall answers stall on)."""
STALL_EVERY = 10
"""Every this many problems, the last answer stalls instead of failing."""


@dataclass(frozen=True)
class LcbProblem:
    """One problem: its tests (input, output) and its labelled answers."""

    question_id: str
    title: str
    func_name: str | None
    starter: str
    tests: list[tuple[str, str]]
    answers: list[tuple[str, str]]
    """(program, expected verdict: passed, wrong, error or timeout)."""


def _ints(rng: random.Random, n: int, low: int = 1, high: int = 10**6) -> list[int]:
    return [rng.randint(low, high) for _ in range(n)]


def _sizes(rng: random.Random, tests: int) -> list[int]:
    """Sizes of the public test, the private ones and the large last one."""
    return [3] + [rng.randint(1, 60) for _ in range(tests - 2)] + [BIG]


def _sum_tests(rng: random.Random, sizes: list[int]) -> list[tuple[str, str]]:
    out = []
    for n in sizes:
        xs = _ints(rng, n)
        out.append((f"{n}\n{' '.join(map(str, xs))}\n", f"{sum(xs)}\n"))
    return out


def _mean_tests(rng: random.Random, sizes: list[int]) -> list[tuple[str, str]]:
    """Means over a power of two of integers: exact in ten decimals."""
    out = []
    for k, size in enumerate(sizes):
        n = 1024 if size >= BIG else 4 if k == 0 else 1 << rng.randint(1, 6)
        xs = _ints(rng, n, 0, 1000)
        xs[0] += 1 - sum(xs) % 2  # an odd total: the mean is never whole
        out.append((f"{n}\n{' '.join(map(str, xs))}\n", f"{sum(xs) / n:.10f}\n"))
    return out


def _pair_tests(rng: random.Random, sizes: list[int]) -> list[tuple[str, str]]:
    out = []
    for n in sizes:
        rows = [(rng.randint(-999, 999), rng.randint(-999, 999)) for _ in range(n)]
        text = "".join(f"{a} {b}\n" for a, b in rows)
        want = "".join(f"{a + b} {a * b}\n" for a, b in rows)
        out.append((f"{n}\n{text}", want))
    return out


def _word_tests(rng: random.Random, sizes: list[int]) -> list[tuple[str, str]]:
    out = []
    for n in sizes:
        words = ["".join(rng.choice("abcxyz") for _ in range(rng.randint(1, 6))) for _ in range(n)]
        out.append((" ".join(words) + "\n", " ".join(reversed(words)) + "\n"))
    return out


def _two_sum_tests(rng: random.Random, sizes: list[int]) -> list[tuple[str, str]]:
    out = []
    for size in sizes:
        n = min(max(size, 2), 400)
        # Multiples of 3 but for the pair (1 mod 3 each): only the pair sums
        # to the target (2 mod 3).
        nums = [3 * x for x in rng.sample(range(1, 10**5), n)]
        i, j = sorted(rng.sample(range(n), 2))
        nums[i] += 1
        nums[j] += 1
        target = nums[i] + nums[j]
        out.append((f"{json.dumps(nums)}\n{target}", json.dumps([i, j])))
    return out


def _max_sub_tests(rng: random.Random, sizes: list[int]) -> list[tuple[str, str]]:
    out = []
    for n in sizes:
        nums = _ints(rng, n, -100, 100)
        nums[0] = -500  # the whole list is never the best run
        best = cur = nums[0]
        for x in nums[1:]:
            cur = max(x, cur + x)
            best = max(best, cur)
        out.append((json.dumps(nums), json.dumps(best)))
    return out


def _palindrome_tests(rng: random.Random, sizes: list[int]) -> list[tuple[str, str]]:
    out = []
    for k, n in enumerate(sizes):
        half = "".join(rng.choice("ab") for _ in range(n))
        text = half + half[::-1] if k % 2 == 0 else half + "c" + half[::-1] + "ab"
        out.append((json.dumps(text), json.dumps(text == text[::-1])))
    return out


def _lengths_tests(rng: random.Random, sizes: list[int]) -> list[tuple[str, str]]:
    out = []
    for n in sizes:
        words = ["x" * rng.randint(1, 9) for _ in range(max(n, 2))]
        words[0], words[1] = "x" * 9, "x"  # never already sorted
        out.append((json.dumps(words), json.dumps(sorted(len(w) for w in words))))
    return out


Tests = Callable[[random.Random, list[int]], list[tuple[str, str]]]
TESTS: dict[str, Tests] = {
    "sum": _sum_tests,
    "mean": _mean_tests,
    "pairs": _pair_tests,
    "words": _word_tests,
    "twoSum": _two_sum_tests,
    "maxSubArray": _max_sub_tests,
    "isPalindrome": _palindrome_tests,
    "sortedLengths": _lengths_tests,
}


def make(
    problems: int, tests: int, *, stall_every: int = STALL_EVERY, seed: int = 0
) -> list[LcbProblem]:
    """``problems`` problems, the eight kinds in turn, ``tests`` tests each
    (the first public); every ``stall_every``-th has a stall answer (none
    for 0)."""
    kinds: list[tuple[str, Kind, bool]] = [(n, k, False) for n, k in STDIN.items()]
    kinds += [(n, k, True) for n, k in FUNCTIONAL.items()]
    if tests < 2:
        raise ValueError("a problem needs at least 2 tests: a public one and the large one")
    out = []
    for index in range(problems):
        name, kind, functional = kinds[index % len(kinds)]
        rng = random.Random(f"{seed}:{index}")
        stall = stall_every > 0 and index % stall_every == stall_every - 1
        answers = [*kind.answers, kind.stall if stall else kind.last]
        out.append(
            LcbProblem(
                question_id=f"lcbp-{index:04d}-{name}",
                title=f"{name} #{index}",
                func_name=name if functional else None,
                starter=kind.starter,
                tests=TESTS[name](rng, _sizes(rng, tests)),
                answers=answers,
            )
        )
    return out


def _cases(tests: list[tuple[str, str]], functional: bool) -> list[dict[str, str]]:
    kind = "functional" if functional else "stdin"
    return [{"input": i, "output": o, "testtype": kind} for i, o in tests]


def release_row(problem: LcbProblem) -> dict[str, Any]:
    """The problem as a line of a LiveCodeBench release file."""
    functional = problem.func_name is not None
    private = json.dumps(_cases(problem.tests[1:], functional))
    return {
        "question_title": problem.title,
        "question_content": f"Solve {problem.title}.",
        "platform": "leetcode" if functional else "atcoder",
        "question_id": problem.question_id,
        "contest_id": "bench",
        "contest_date": "2024-01-01T00:00:00",
        "starter_code": problem.starter,
        "difficulty": "easy",
        "public_test_cases": json.dumps(_cases(problem.tests[:1], functional)),
        "private_test_cases": base64.b64encode(zlib.compress(pickle.dumps(private))).decode(),
        "metadata": json.dumps({"func_name": problem.func_name} if functional else {}),
    }


def upstream_sample(problem: LcbProblem) -> dict[str, str]:
    """The problem as upstream's evaluator takes it (``input_output``)."""
    return {
        "input_output": json.dumps(
            {
                "inputs": [i for i, _ in problem.tests],
                "outputs": [o for _, o in problem.tests],
                "fn_name": problem.func_name,
            }
        )
    }
