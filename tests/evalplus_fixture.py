"""The EvalPlus-format fixtures, written for this project, and their samples.

``python3 tests/evalplus_fixture.py`` writes ``fixtures/evalplus/*.jsonl``
(problems in EvalPlus's release format) and, with ``--samples DIR``, a
samples file per flavor: for every problem its reference, another right
answer, one wrong on base inputs, one wrong only on the plus inputs, and
answers that crash, crash late, stall on one input, do not compile, return
the wrong type or exit at import. Deterministic: the same files every time.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "evalplus"


def _problem(
    task_id: str,
    entry: str,
    doc: str,
    sig: str,
    solution: str,
    base: list[list[Any]],
    plus: list[list[Any]],
    *,
    atol: float = 0.0,
    imports: str = "",
    wrong_base: str,
    wrong_plus: str,
    other: str,
) -> dict[str, Any]:
    prompt = f'{imports}def {entry}({sig}):\n    """{doc}"""\n'
    return {
        "task_id": task_id,
        "prompt": prompt,
        "entry_point": entry,
        "canonical_solution": solution,
        "contract": "",
        "base_input": base,
        "plus_input": plus,
        "atol": atol,
        "_answers": {"other": other, "wrong_base": wrong_base, "wrong_plus": wrong_plus},
    }


def _rng_lists(seed: int, count: int, size: int, lo: int, hi: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randint(lo, hi) for _ in range(rng.randint(0, size))] for _ in range(count)]


def humaneval_problems() -> list[dict[str, Any]]:
    rng = random.Random(7)
    floats = [
        [[round(rng.uniform(-100, 100), 3) for _ in range(rng.randint(1, 30))]] for _ in range(40)
    ]
    polys = []
    for _ in range(30):
        n = rng.choice([2, 4, 6])
        coeffs = [rng.choice([-3, -2, -1, 1, 2, 3]) * rng.randint(1, 5) for _ in range(n)]
        polys.append([coeffs])
    words = ["apple", "Orange", "sky", "queue", "rhythm", "AEIOU", "", "xyz" * 50]
    return [
        _problem(
            "Fixture/0",
            "running_mean",
            "Mean of the first i+1 numbers, for each i.",
            "xs: list",
            "    out, total = [], 0.0\n    for i, x in enumerate(xs):\n"
            "        total += x\n        out.append(total / (i + 1))\n    return out\n",
            [[[1.0, 2.0, 3.0]], [[5.5]]],
            floats,
            other="    import itertools\n    return [s / (i + 1) for i, s in enumerate(itertools.accumulate(float(x) for x in xs))]\n",
            wrong_base="    return [sum(xs) / len(xs)] * len(xs)\n",
            wrong_plus="    out, total = [], 0.0\n    for i, x in enumerate(xs):\n        total += x if abs(x) < 50 else round(x)\n"
            "        out.append(total / (i + 1))\n    return out\n",
        ),
        _problem(
            "Fixture/1",
            "find_zero",
            "A root of the polynomial with coefficients xs (even length).",
            "xs: list",
            "    lo, hi = -1.0, 1.0\n    while poly(xs, lo) * poly(xs, hi) > 0:\n"
            "        lo, hi = lo * 2.0, hi * 2.0\n    for _ in range(200):\n"
            "        mid = (lo + hi) / 2.0\n        if poly(xs, mid) * poly(xs, lo) > 0:\n"
            "            lo = mid\n        else:\n            hi = mid\n    return lo\n",
            [[[1, 2]], [[-6, 11, -6, 1]]],
            polys,
            atol=1e-6,
            imports="import math\n\n\ndef poly(xs: list, x: float):\n"
            "    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n\n",
            other="    a, b = -1e6, 1e6\n    for _ in range(400):\n        m = (a + b) / 2\n"
            "        if poly(xs, a) * poly(xs, m) <= 0:\n            b = m\n        else:\n            a = m\n    return a\n",
            wrong_base="    return 0.0\n",
            wrong_plus="    lo, hi = -1.0, 1.0\n    for _ in range(60):\n        mid = (lo + hi) / 2.0\n"
            "        if poly(xs, mid) * poly(xs, lo) > 0:\n            lo = mid\n        else:\n"
            "            hi = mid\n    return lo\n",
        ),
        _problem(
            "Fixture/2",
            "count_vowels",
            "How many of a, e, i, o, u (any case) s has.",
            "s: str",
            "    return sum(c in 'aeiouAEIOU' for c in s)\n",
            [["apple"], ["sky"], ["queue"]],
            [[w] for w in words] + [["a" * 10_000 + "b" * 10_000]],
            other="    return len([c for c in s.lower() if c in 'aeiou'])\n",
            wrong_base="    return sum(c in 'aeiou' for c in s) + 1\n",
            wrong_plus="    return sum(c in 'aeiou' for c in s)\n",
        ),
        _problem(
            "Fixture/3",
            "sort_by_digit_sum",
            "Sort by the sum of decimal digits, ties by value.",
            "nums: list",
            "    return sorted(nums, key=lambda n: (sum(int(d) for d in str(abs(n))), n))\n",
            [[[19, 3, 111]], [[]]],
            [[x] for x in _rng_lists(3, 40, 20, -500, 500)],
            other="    def key(n):\n        return (sum(map(int, str(abs(n)))), n)\n    return sorted(nums, key=key)\n",
            wrong_base="    return sorted(nums)\n",
            wrong_plus="    return sorted(nums, key=lambda n: (sum(int(d) for d in str(n) if d.isdigit()), n)) if all(n >= 0 for n in nums) else nums[::-1]\n",
        ),
        _problem(
            "Fixture/4",
            "is_balanced",
            "Are the brackets ()[]{} in s balanced?",
            "s: str",
            "    pairs, stack = {')': '(', ']': '[', '}': '{'}, []\n    for c in s:\n"
            "        if c in '([{':\n            stack.append(c)\n        elif c in pairs:\n"
            "            if not stack or stack.pop() != pairs[c]:\n                return False\n"
            "    return not stack\n",
            [["()"], ["([)]"], ["{[]}"]],
            [["(" * 500 + ")" * 500], ["]"], [""], ["(()"], ["a(b)c"]],
            other="    prev = None\n    while prev != s:\n        prev, s = s, s.replace('()', '').replace('[]', '').replace('{}', '')\n"
            "    return not any(c in '()[]{}' for c in s)\n",
            wrong_base="    return s.count('(') == s.count(')')\n",
            wrong_plus="    pairs, stack = {')': '(', ']': '[', '}': '{'}, []\n    for c in s:\n"
            "        if c in '([{':\n            stack.append(c)\n        elif c in pairs:\n"
            "            if stack.pop() != pairs[c]:\n                return False\n    return not stack\n",
        ),
        _problem(
            "Fixture/5",
            "rle",
            "Run-length encoding as a list of (char, count) tuples.",
            "s: str",
            "    out = []\n    for c in s:\n        if out and out[-1][0] == c:\n"
            "            out[-1] = (c, out[-1][1] + 1)\n        else:\n            out.append((c, 1))\n    return out\n",
            [["aab"], ["abc"]],
            [[""], ["z" * 300], ["aabbaa"], ["ab" * 100]],
            other="    import itertools\n    return [(k, len(list(g))) for k, g in itertools.groupby(s)]\n",
            wrong_base="    return [[c, s.count(c)] for c in sorted(set(s))]\n",
            wrong_plus="    out = []\n    for c in s:\n        if out and out[-1][0] == c:\n"
            "            out[-1] = (c, out[-1][1] + 1)\n        else:\n            out.append((c, 1))\n"
            "    return out if s else None\n",
        ),
        _problem(
            "Fixture/6",
            "mean_abs_dev",
            "Mean absolute deviation around the mean.",
            "xs: list",
            "    m = sum(xs) / len(xs)\n    return sum(abs(x - m) for x in xs) / len(xs)\n",
            [[[1.0, 2.0, 3.0, 4.0]]],
            floats[:20],
            atol=1e-4,
            other="    import statistics\n    m = statistics.fmean(xs)\n    return statistics.fmean(abs(x - m) for x in xs)\n",
            wrong_base="    m = sum(xs) / len(xs)\n    return max(abs(x - m) for x in xs)\n",
            wrong_plus="    m = sum(xs) / len(xs)\n    return round(sum(abs(x - m) for x in xs) / len(xs), 2)\n",
        ),
        _problem(
            "Fixture/7",
            "big_sum",
            "Sum of the list.",
            "xs: list",
            "    return sum(xs)\n",
            [[[1, 2, 3]]],
            [[list(range(60_000))], [[10**30, -(10**30), 5]]],
            other="    total = 0\n    for x in xs:\n        total += x\n    return total\n",
            wrong_base="    return sum(xs[1:])\n",
            wrong_plus="    return sum(xs) if len(xs) < 1000 else 0\n",
        ),
        _problem(
            "Fixture/8",
            "word_freq",
            "How often each lower-cased word of text occurs.",
            "text: str",
            "    out = {}\n    for w in text.lower().split():\n        out[w] = out.get(w, 0) + 1\n    return out\n",
            [["a b a"], [""]],
            [["The the THE cat"], ["x " * 1000], ["  spaced   out  "]],
            other="    import collections\n    return dict(collections.Counter(text.lower().split()))\n",
            wrong_base="    return {w: 1 for w in text.split()}\n",
            wrong_plus="    out = {}\n    for w in text.split():\n        out[w] = out.get(w, 0) + 1\n    return out\n",
        ),
        _problem(
            "Fixture/9",
            "safe_div",
            "a / b, or None when b is 0.",
            "a: float, b: float",
            "    return None if b == 0 else a / b\n",
            [[1, 2], [3.0, 0]],
            [[0, 5], [1e300, 1e-300], [-7, 3], [2, 0.0]],
            other="    try:\n        return a / b\n    except ZeroDivisionError:\n        return None\n",
            wrong_base="    return a // b if b else None\n",
            wrong_plus="    return None if b == 0 else round(a / b, 2)\n",
        ),
        _problem(
            "Fixture/10",
            "flatten",
            "All the numbers of a nested list, in order.",
            "nested: list",
            "    out = []\n    for x in nested:\n        if isinstance(x, list):\n"
            "            out.extend(flatten(x))\n        else:\n            out.append(x)\n    return out\n",
            [[[1, [2, 3]]], [[]]],
            [[[[[[]]]]], [[1, [2, [3, [4, [5]]]]]], [list(range(50))]],
            other="    stack, out = [nested], []\n    while stack:\n        top = stack.pop()\n"
            "        if isinstance(top, list):\n            stack.extend(reversed(top))\n        else:\n"
            "            out.append(top)\n    return out\n",
            wrong_base="    return [x for x in nested if not isinstance(x, list)]\n",
            wrong_plus="    out = []\n    for x in nested:\n        if isinstance(x, list):\n"
            "            out.extend(x)\n        else:\n            out.append(x)\n    return out\n",
        ),
        _problem(
            "Fixture/11",
            "primes_below",
            "The primes below n, ascending.",
            "n: int",
            "    sieve = [True] * max(n, 2)\n    sieve[0] = sieve[1] = False\n"
            "    for i in range(2, int(n ** 0.5) + 1):\n        if sieve[i]:\n"
            "            sieve[i * i::i] = [False] * len(sieve[i * i::i])\n"
            "    return [i for i in range(n) if sieve[i]]\n",
            [[10], [20]],
            [[0], [1], [2], [3], [1000], [100_000]],
            other="    found = []\n    for k in range(2, n):\n        for p in found:\n"
            "            if p * p > k:\n                found.append(k)\n                break\n"
            "            if k % p == 0:\n                break\n        else:\n"
            "            found.append(k)\n    return found\n",
            wrong_base="    return [k for k in range(2, n) if k % 2]\n",
            wrong_plus="    return [k for k in range(2, n + 1) if all(k % d for d in range(2, int(k ** 0.5) + 1))]\n",
        ),
    ]


def mbpp_problems() -> list[dict[str, Any]]:
    def mbpp(task: str, text: str, **kw: Any) -> dict[str, Any]:
        row = _problem(task, doc=text, **kw)
        row["prompt"] = f'"""\n{text}\n"""\n'
        row["canonical_solution"] = f"def {kw['entry']}({kw['sig']}):\n" + kw["solution"]
        for key, body in row["_answers"].items():
            row["_answers"][key] = f"def {kw['entry']}({kw['sig']}):\n" + body
        return row

    rng = random.Random(11)
    pairs = [
        [[rng.randint(0, 9) for _ in range(rng.randint(0, 8))] for _ in range(2)] for _ in range(30)
    ]
    return [
        mbpp(
            "Mbpp/2",
            "The elements two tuples share.",
            entry="similar_elements",
            sig="a, b",
            solution="    return tuple(set(a) & set(b))\n",
            base=[[[3, 4, 5, 6], [5, 7, 4, 10]]],
            plus=pairs,
            other="    return [x for x in set(a) if x in b]\n",
            wrong_base="    return tuple(a)\n",
            wrong_plus="    return tuple(x for x in a if x in b)\n",
        ),
        mbpp(
            "Mbpp/581",
            "Surface area of a square pyramid (base edge, height), rounded.",
            entry="surface_Area",
            sig="b, h",
            solution="    import math\n    return round(b * b + 2 * b * math.sqrt(b * b / 4 + h * h))\n",
            base=[[3, 4], [4, 5]],
            plus=[[1, 1], [10, 2], [7, 0], [100, 1000]],
            other="    return round(b**2 + 2 * b * ((b / 2) ** 2 + h**2) ** 0.5)\n",
            wrong_base="    return 2 * b * h + b * b\n",
            wrong_plus="    return round(b * b + 2 * b * h)\n",
        ),
        mbpp(
            "Mbpp/124",
            "The angle of a complex number a + b.",
            entry="angle_complex",
            sig="a, b",
            solution="    import cmath\n    return cmath.phase(a + b)\n",
            base=[[0, "1j"], [2, "1j"]],
            plus=[[-1, "0j"], [0.5, "-2j"], [3, "4j"]],
            other="    import math\n    z = a + b\n    return math.atan2(z.imag, z.real)\n",
            wrong_base="    return abs(a + b)\n",
            wrong_plus="    import math\n    z = a + b\n    return math.atan(z.imag / z.real) if z.real else math.pi / 2\n",
        ),
        mbpp(
            "Mbpp/787",
            "A match when the text has an 'a' followed by three 'b'.",
            entry="text_match_three",
            sig="text",
            solution="    import re\n    return re.search('ab{3}', text)\n",
            base=[["ac"], ["abbbba"]],
            plus=[[""], ["abbb"], ["caacabbbba"], ["abb"]],
            other="    return 'abbb' in text\n",
            wrong_base="    return None\n",
            wrong_plus="    import re\n    return re.match('ab{3}', text)\n",
        ),
        mbpp(
            "Mbpp/900",
            "Is n not a prime?",
            entry="is_not_prime",
            sig="n",
            solution="    return n < 2 or any(n % d == 0 for d in range(2, int(n ** 0.5) + 1))\n",
            base=[[2], [10], [35]],
            plus=[[0], [1], [97], [7919], [1_000_003]],
            other="    if n < 2:\n        return True\n    d = 2\n    while d * d <= n:\n"
            "        if n % d == 0:\n            return True\n        d += 1\n    return False\n",
            wrong_base="    return n % 2 == 0\n",
            wrong_plus="    return any(n % d == 0 for d in range(2, int(n ** 0.5) + 1))\n",
        ),
        mbpp(
            "Mbpp/901",
            "The n largest numbers, largest first.",
            entry="heap_queue_largest",
            sig="nums, n",
            solution="    import heapq\n    return heapq.nlargest(n, nums)\n",
            base=[[[25, 35, 22, 85, 14, 65, 75, 22, 58], 3]],
            plus=[[x, 2] for x in _rng_lists(5, 20, 15, -50, 50)],
            other="    return sorted(nums, reverse=True)[:n]\n",
            wrong_base="    return sorted(nums)[:n]\n",
            wrong_plus="    return sorted(set(nums), reverse=True)[:n]\n",
        ),
        mbpp(
            "Mbpp/902",
            "The first character that repeats, or None.",
            entry="first_repeated_char",
            sig="s",
            solution="    seen = set()\n    for c in s:\n        if c in seen:\n            return c\n"
            "        seen.add(c)\n    return None\n",
            base=[["abcabc"], ["abc"]],
            plus=[[""], ["aa"], ["abcdefghijklmnopqrstuvwxyzz"], ["abba"]],
            other="    for i, c in enumerate(s):\n        if c in s[:i]:\n            return c\n    return None\n",
            wrong_base="    return s[0] if s else None\n",
            wrong_plus="    for i, c in enumerate(s):\n        if c in s[:i]:\n            return c\n    return ''\n",
        ),
        mbpp(
            "Mbpp/903",
            "The words of s in reverse order.",
            entry="reverse_words",
            sig="s",
            solution="    return ' '.join(reversed(s.split()))\n",
            base=[["python program"], ["java language"]],
            plus=[[""], ["  a  b "], ["one"]],
            other="    return ' '.join(s.split()[::-1])\n",
            wrong_base="    return s[::-1]\n",
            wrong_plus="    return ' '.join(reversed(s.split(' ')))\n",
        ),
        mbpp(
            "Mbpp/904",
            "Sum of the squares of 1..n as a float average over n.",
            entry="mean_square",
            sig="n",
            solution="    return sum(i * i for i in range(1, n + 1)) / n\n",
            base=[[1], [3]],
            plus=[[7], [1000], [99_999]],
            other="    return (n + 1) * (2 * n + 1) / 6\n",
            wrong_base="    return float(n * n)\n",
            wrong_plus="    return (n + 1) * (2 * n + 1) // 6\n",
        ),
        mbpp(
            "Mbpp/905",
            "The two lists merged, sorted.",
            entry="merge_sorted",
            sig="a, b",
            solution="    return sorted(a + b)\n",
            base=[[[1, 3], [2, 4]]],
            plus=[[x, y] for x, y in pairs[:15]],
            other="    import heapq\n    return list(heapq.merge(sorted(a), sorted(b)))\n",
            wrong_base="    return a + b\n",
            wrong_plus="    return sorted(set(a + b))\n",
        ),
    ]


GENERIC = {
    "crash": "    raise ValueError('no')\n",
    "crash_late": "    global _calls\n    _calls = globals().get('_calls', 0) + 1\n"
    "    if _calls > 2:\n        raise RuntimeError('late')\n",
    "stall": "    import time\n    global _calls\n    _calls = globals().get('_calls', 0) + 1\n"
    "    if _calls == 2:\n        time.sleep(STALL)\n",
    "syntax": "    return (\n",
    "wrong_type": None,
    "exit_at_import": None,
}


def _fn_header(row: dict[str, Any]) -> str:
    """The ``def`` line of the entry point in the canonical program."""
    program = row["prompt"] + row["canonical_solution"]
    for line in program.splitlines():
        if line.startswith(f"def {row['entry_point']}("):
            return line
    raise AssertionError(row["task_id"])


def samples(rows: list[dict[str, Any]], flavor: str, stall_s: float) -> list[dict[str, Any]]:
    """Ten samples per problem: ``{"task_id", "solution", "kind"}``."""
    out = []
    for row in rows:
        prompt = row["prompt"] if flavor == "humaneval" else ""
        canonical = row["prompt"] + row["canonical_solution"]
        answers = row["_answers"]
        body = {k: (prompt + v if flavor == "humaneval" else v) for k, v in answers.items()}
        header = _fn_header(row)
        renamed = canonical.replace(
            header, header.replace(f"def {row['entry_point']}(", "def _ref(")
        )
        call = f"    return _ref({', '.join(_params(header))})\n"
        kinds = {
            "reference": canonical,
            "other": body["other"],
            "wrong_base": body["wrong_base"],
            "wrong_plus": body["wrong_plus"],
            "crash": prompt + header + "\n" + GENERIC["crash"]
            if flavor == "humaneval"
            else header + "\n" + GENERIC["crash"],
            "crash_late": renamed + "\n\n" + header + "\n" + GENERIC["crash_late"] + call,
            "stall": renamed
            + "\n\n"
            + header
            + "\n"
            + GENERIC["stall"].replace("STALL", repr(stall_s))
            + call,
            "syntax": canonical + "\n\ndef broken(:\n    pass\n",
            "wrong_type": renamed
            + "\n\n"
            + header
            + "\n    return str("
            + call.strip()[len("return ") :]
            + ")\n",
            "exit_at_import": canonical + "\nraise SystemExit(0)\n",
        }
        for kind, solution in kinds.items():
            out.append({"task_id": row["task_id"], "solution": solution, "kind": kind})
    return out


def _params(header: str) -> list[str]:
    inside = header[header.index("(") + 1 : header.rindex(")")]
    return [p.split(":")[0].split("=")[0].strip() for p in inside.split(",") if p.strip()]


def problem_rows(flavor: str) -> list[dict[str, Any]]:
    return humaneval_problems() if flavor == "humaneval" else mbpp_problems()


def write(out: Path = OUT) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for flavor in ("humaneval", "mbpp"):
        rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in problem_rows(flavor)]
        text = "".join(json.dumps(r) + "\n" for r in rows)
        (out / f"{flavor}_plus.jsonl").write_text(text)


def write_samples(directory: Path, stall_s: float) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for flavor in ("humaneval", "mbpp"):
        rows = samples(problem_rows(flavor), flavor, stall_s)
        path = directory / f"{flavor}_plus_samples.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths[flavor] = path
    return paths


def write_mock(results: Path, samples: Path, flavor: str, out: Path = OUT) -> None:
    """The replay fixture: each sample's verdict from a real run's results."""
    rows = [json.loads(x) for x in results.read_text().splitlines()]
    by = {(r["problem_id"], r["sample_index"]): r for r in rows}
    seen: dict[str, int] = {}
    lines = []
    for s in (json.loads(x) for x in samples.read_text().splitlines()):
        i = seen[s["task_id"]] = seen.get(s["task_id"], -1) + 1
        r = by[(s["task_id"], i)]
        record = {"problem_id": r["problem_id"], "sample_index": i, "completion": s["solution"]}
        record |= {"status": r["status"], "reason": r["reason"], "parts": r["parts"]}
        lines.append(json.dumps(record) + "\n")
    (out / f"{flavor}_plus_mock.jsonl").write_text("".join(lines))


def counting_pool() -> type[Any]:
    """A `LocalPool` class that counts the reference `Call`s it runs (a
    fresh class each time: the count is the class's)."""
    from aioeval.executors.local import LocalPool
    from aioeval.sandbox.protocol import Call, Outcome, Task

    class Counting(LocalPool):
        calls = 0

        async def execute(self, task: Task) -> Outcome:
            if isinstance(task, Call):
                Counting.calls += 1
            return await super().execute(task)

    return Counting


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=Path)
    parser.add_argument("--stall-s", type=float, default=6.0)
    parser.add_argument("--mock", nargs=3, metavar=("FLAVOR", "RESULTS", "SAMPLES"))
    args = parser.parse_args()
    write()
    if args.samples:
        print(write_samples(args.samples, args.stall_s))
    if args.mock:
        write_mock(Path(args.mock[1]), Path(args.mock[2]), args.mock[0])
