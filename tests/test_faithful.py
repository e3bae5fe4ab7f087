"""Strict scoring judges honest programs of every ordinary shape as the
official single program does, and differs only where candidate code would
decide a comparison (the intended differences, listed at the end).

Each case is a HumanEval-format problem with a right and a wrong answer;
all of them are scored in one strict and one official run through the real
pipeline, sandbox and verifier."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path

import anyio
import pytest
from scored import read_results, score, write_set

import aioeval
from aioeval.types import CandidateResult


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _body(text: str) -> str:
    """A completion: ``text`` dedented, then indented as a body under the prompt."""
    return textwrap.indent(_d(text), "    ")


# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "signature-only prompt": (
        "def add(a, b):\n",
        "def check(candidate):\n    assert candidate(1, 2) == 3\n",
        "add",
        "    return a + b\n",
        "    return a - b\n",
    ),
    "test passes a lambda": (
        'def apply(f, xs):\n    """f on each"""\n',
        "def check(candidate):\n    assert candidate(lambda v: v * 2, [1, 2]) == [2, 4]\n",
        "apply",
        "    return [f(x) for x in xs]\n",
        "    return xs\n",
    ),
    "test passes a key function and a class": (
        'def order(xs, key, kind):\n    """sorted by key, as kind"""\n',
        _d(
            """
            class Box:
                def __init__(self, items):
                    self.items = items
            def check(candidate):
                b = candidate(['bb', 'a'], len, Box)
                assert isinstance(b, Box) and b.items == ['a', 'bb']
            """
        ),
        "order",
        "    return kind(sorted(xs, key=key))\n",
        "    return kind(xs)\n",
    ),
    "class as the entry point": (
        'class Tally:\n    """adds numbers"""\n',
        "def check(candidate):\n    c = candidate()\n    c.add(3)\n    c.add(4)\n    assert c.total() == 7\n",
        "Tally",
        "    def __init__(self):\n        self.t = 0\n    def add(self, k):\n        self.t += k\n    def total(self):\n        return self.t\n",
        "    def __init__(self):\n        self.t = 0\n    def add(self, k):\n        self.t = k\n    def total(self):\n        return self.t\n",
    ),
    "endless generator read with next": (
        'def naturals():\n    """0, 1, 2, ..."""\n',
        "def check(candidate):\n    g = candidate()\n    assert [next(g) for _ in range(3)] == [0, 1, 2]\n",
        "naturals",
        "    i = 0\n    while True:\n        yield i\n        i += 1\n",
        "    i = 1\n    while True:\n        yield i\n        i += 1\n",
    ),
    "argument changed in place": (
        'def push(xs, v):\n    """append v to xs in place"""\n',
        "def check(candidate):\n    a = [1]\n    assert candidate(a, 2) is None\n    assert a == [1, 2]\n",
        "push",
        "    xs.append(v)\n",
        "    xs = xs + [v]\n",
    ),
    "dict argument changed in place, aliased": (
        'def bump(d, k):\n    """d[k] += 1 in place"""\n',
        _d(
            """
            def check(candidate):
                inner = [0]
                d = {'a': inner}
                candidate(d, 'a')
                assert d['a'] is inner and inner == [1]
            """
        ),
        "bump",
        "    d[k][0] += 1\n",
        "    d[k] = [d[k][0] + 1]\n",
    ),
    "a new list is a new object": (
        'def copy(xs):\n    """a copy"""\n',
        "def check(candidate):\n    a = [1]\n    b = candidate(a)\n    assert b == a and b is not a\n",
        "copy",
        "    return list(xs)\n",
        "    return xs\n",
    ),
    "the same list comes back": (
        'def sort_in_place(xs):\n    """sort xs and return it"""\n',
        "def check(candidate):\n    a = [2, 1]\n    assert candidate(a) is a and a == [1, 2]\n",
        "sort_in_place",
        "    xs.sort()\n    return xs\n",
        "    return sorted(xs)\n",
    ),
    "second function the test calls": (
        'def f(x):\n    """x + 1; also write g(x) = 2 * x"""\n',
        "def check(candidate):\n    assert candidate(1) == 2\n    assert g(3) == 6\n",
        "f",
        "    return x + 1\n\n\ndef g(x):\n    return x * 2\n",
        "    return x + 1\n\n\ndef g(x):\n    return x * 3\n",
    ),
    "test prints": (
        'def ident(x):\n    """x"""\n',
        "def check(candidate):\n    print('checking', candidate)\n    assert candidate(1) == 1\n",
        "ident",
        "    return x\n",
        "    return 0\n",
    ),
    "numpy bool is not True": (
        'import numpy as np\n\n\ndef positive(x):\n    """is x > 0"""\n',
        "def check(candidate):\n    assert candidate(1) is True\n    assert candidate(-1) is False\n",
        "positive",
        "    return bool(x > 0)\n",
        "    return np.bool_(x > 0)\n",
    ),
    "deque and numpy array read with tuple": (
        'import numpy as np\nfrom collections import deque\n\n\ndef twice(xs):\n    """(deque, array)"""\n',
        _d(
            """
            import numpy as np
            def check(candidate):
                d, a = candidate([1, 2])
                assert tuple(d) == (1, 2) and type(d).__name__ == 'deque'
                assert np.array_equal(a, np.array([2, 4])) and a.dtype.kind == 'i'
            """
        ),
        "twice",
        "    return deque(xs), np.array(xs) * 2\n",
        "    return deque(xs), np.array(xs)\n",
    ),
    "Counter, Fraction and Decimal keep their types": (
        'from collections import Counter\nfrom decimal import Decimal\nfrom fractions import Fraction\n\n\ndef stats(xs):\n    """(Counter, mean as Fraction, sum as Decimal)"""\n',
        _d(
            """
            from collections import Counter
            from decimal import Decimal
            from fractions import Fraction
            def check(candidate):
                c, m, s = candidate([1, 1, 2])
                assert c == Counter({1: 2, 2: 1}) and type(c) is Counter
                assert m == Fraction(4, 3) and type(m) is Fraction
                assert s == Decimal('4') and type(s) is Decimal
            """
        ),
        "stats",
        "    return Counter(xs), Fraction(sum(xs), len(xs)), Decimal(sum(xs))\n",
        "    return Counter(xs), sum(xs) / len(xs), Decimal(sum(xs))\n",
    ),
    "exception class of the prompt": (
        'class Negative(ValueError):\n    pass\n\n\ndef root(x):\n    """raise Negative below 0"""\n',
        _d(
            """
            def check(candidate):
                try:
                    candidate(-1)
                except Negative as exc:
                    assert isinstance(exc, ValueError)
                else:
                    assert False, 'no exception'
                assert candidate(4) == 2
            """
        ),
        "root",
        "    if x < 0:\n        raise Negative(x)\n    return int(x ** 0.5)\n",
        "    if x < 0:\n        raise ValueError(x)\n    return int(x ** 0.5)\n",
    ),
    "dataclass of the prompt compared": (
        'from dataclasses import dataclass\n\n\n@dataclass\nclass Point:\n    x: int\n    y: int\n\n\ndef mirror(p):\n    """Point(y, x)"""\n',
        "def check(candidate):\n    assert candidate(Point(1, 2)) == Point(2, 1)\n    assert candidate(Point(3, 3)) != Point(0, 0)\n",
        "mirror",
        "    return Point(p.y, p.x)\n",
        "    return Point(p.x, p.y)\n",
    ),
    "helper re-emitted with a slip": (
        'def double(x):\n    return 2 * x\n\n\ndef plus_one(x):\n    """x + 1"""\n',
        "def check(candidate):\n    assert candidate(double(2)) == 5\n",
        "plus_one",
        "def double(x):\n    return 2 * x\n\n\ndef plus_one(x):\n    return x + 1\n",
        "def double(x):\n    return 3 * x\n\n\ndef plus_one(x):\n    return x + 1\n",
    ),
    "namedtuple result": (
        'from collections import namedtuple\nPair = namedtuple("Pair", "a b")\n\n\ndef pair(x):\n    """Pair(x, -x)"""\n',
        "def check(candidate):\n    p = candidate(2)\n    assert p == (2, -2) and p.a == 2 and p.b == -2\n",
        "pair",
        "    return Pair(x, -x)\n",
        "    return Pair(-x, x)\n",
    ),
    "keyword arguments and defaults": (
        'def scale(x, k=2, *, off=0):\n    """x * k + off"""\n',
        "def check(candidate):\n    assert candidate(3) == 6\n    assert candidate(3, off=1, k=3) == 10\n",
        "scale",
        "    return x * k + off\n",
        "    return x * k\n",
    ),
    "floats, nan and big ints": (
        'import math\n\n\ndef f(x):\n    """(x / 3, nan, 2 ** x)"""\n',
        _d(
            """
            import math
            def check(candidate):
                a, b, c = candidate(300)
                assert abs(a - 100.0) < 1e-9 and math.isnan(b) and c == 2 ** 300
            """
        ),
        "f",
        "    return x / 3, float('nan'), 2 ** x\n",
        "    return x / 3, 0.0, 2 ** x\n",
    ),
    "enum member of the prompt": (
        'from enum import Enum\n\n\nclass Color(Enum):\n    RED = 1\n    BLUE = 2\n\n\ndef parse(c):\n    """r -> RED, b -> BLUE"""\n',
        "def check(candidate):\n    assert candidate('r') == Color.RED\n    assert candidate('b') is Color.BLUE\n    assert candidate('r') != Color.BLUE\n",
        "parse",
        "    return Color.RED if c == 'r' else Color.BLUE\n",
        "    return Color.BLUE\n",
    ),
    "the same object twice, by identity": (
        'class Node:\n    pass\n\n\ndef pick(a, b, first):\n    """a if first else b"""\n',
        "def check(candidate):\n    a, b = Node(), Node()\n    assert candidate(a, b, True) is a\n    assert candidate(a, b, False) == b\n",
        "pick",
        "    return a if first else b\n",
        "    return b if first else a\n",
    ),
    "global state across calls": (
        'SEEN = []\n\n\ndef remember(x):\n    """append x, return how many"""\n',
        "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(2) == 2\n",
        "remember",
        "    SEEN.append(x)\n    return len(SEEN)\n",
        "    return len(SEEN) + 1\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
INTENDED: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "an always-equal object": (
        'def f(x):\n    """x + 1"""\n',
        "def check(candidate):\n    assert candidate(1) == 2\n",
        "f",
        "    class A:\n        def __eq__(self, o):\n            return True\n    return A()\n",
        "failed",
        "passed",
        "strict scoring: the test asked for ==",
    ),
    "a builtin the test uses, shadowed": (
        'def f(x):\n    """sorted x"""\n',
        "def check(candidate):\n    assert sorted(candidate([2, 1])) == sorted([1, 2])\n",
        "f",
        "    return [9]\n\nsorted = lambda xs: [1, 2]\n",
        "failed",
        "passed",
        "AssertionError",
    ),
    "a prompt helper redefined to forge the expected value": (
        'def encode(s):\n    return s[::-1]\n\n\ndef decode(s):\n    """inverse of encode"""\n',
        "def check(candidate):\n    for s in ['ab', 'xyz']:\n        assert candidate(encode(s)) == s\n",
        "decode",
        "    return s\n\n\ndef encode(s):\n    return s\n",
        "failed",
        "passed",
        "answers differently from the problem's own",
    ),
    "a prompt helper re-emitted with a slip its answer agrees with": (
        'def encode(s):\n    return s[::-1]\n\n\ndef decode(s):\n    """inverse of encode"""\n',
        "def check(candidate):\n    for s in ['ab', 'xyz']:\n        assert candidate(encode(s)) == s\n",
        "decode",
        "    return s[-1:] + s[:-1]\n\n\ndef encode(s):\n    return s[1:] + s[:1]\n",
        "failed",
        "passed",
        "answers differently from the problem's own",
    ),
    "a failed assert inside the test's with block, swallowed": (
        'class Counter:\n    """context manager; add(); total()"""\n',
        "def check(candidate):\n    with candidate() as c:\n        c.add(2)\n        assert c.total() == 2\n",
        "Counter",
        "    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return True\n"
        "    def add(self, x):\n        pass\n    def total(self):\n        return 0\n",
        "failed",
        "passed",
        "swallowed a failure inside the test's with block",
    ),
    "an error of the test's expression on the candidate's value, swallowed": (
        'class Counter:\n    """context manager; total()"""\n',
        "def check(candidate):\n    with candidate() as c:\n        assert c.total() + 1 == 3\n",
        "Counter",
        "    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return 1\n"
        "    def total(self):\n        return None\n",
        "failed",
        "passed",
        "swallowed a failure inside the test's with block",
    ),
    "the candidate's own error inside the test's with block, swallowed": (
        'class Counter:\n    """context manager; total()"""\n',
        "def check(candidate):\n    with candidate() as c:\n        assert c.total() == 3\n",
        "Counter",
        "    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return True\n"
        "    def total(self):\n        raise ValueError('no')\n",
        "failed",
        "passed",
        "swallowed a failure inside the test's with block",
    ),
    "a truth value decided by __bool__": (
        'def f(x):\n    """is x even"""\n',
        "def check(candidate):\n    assert candidate(2)\n    assert not candidate(3)\n",
        "f",
        "    class B:\n        def __bool__(self):\n            return x % 2 == 0\n    return B()\n",
        "failed",
        "passed",
        "strict scoring: the test asked for the truth value",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("faithful"), SHAPES, INTENDED)


def score_both(
    tmp: Path, shapes: Mapping[str, tuple[str, ...]], listed: Mapping[str, tuple[str, ...]]
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    """Each shape's right and wrong answer, and each listed case's one
    answer, scored strict and official in one run each."""
    problems, samples = [], []
    for name, (prompt, test, entry, right, wrong) in shapes.items():
        problems.append({"task_id": name, "prompt": prompt, "test": test, "entry_point": entry})
        samples += [{"task_id": name, "completion": c} for c in (right, wrong)]
    for name, (prompt, test, entry, answer, *_) in listed.items():
        problems.append({"task_id": name, "prompt": prompt, "test": test, "entry_point": entry})
        samples.append({"task_id": name, "completion": answer})
    write_set(tmp, problems, samples)
    return {m: score(tmp, m) for m in ("strict", "official")}


def judged_alike(verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str) -> None:
    """A shape's right answer passes and its wrong one fails, in both scorings."""
    strict, official = verdicts["strict"], verdicts["official"]
    right, wrong = (name, 0), (name, 1)
    assert official[right].status == "passed", official[right]
    assert official[wrong].status == "failed", official[wrong]
    assert strict[right].status == "passed", strict[right].reason
    assert strict[wrong].status == "failed", strict[wrong].reason


def judged_as_listed(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]],
    name: str,
    listed: Mapping[str, tuple[str, ...]],
) -> None:
    """A listed case gets the statuses (and strict's reason) its entry gives."""
    *_, strict_status, official_status, reason = listed[name]
    got = verdicts["strict"][(name, 0)]
    assert got.status == strict_status and reason in got.reason, got
    assert verdicts["official"][(name, 0)].status == official_status


@pytest.mark.parametrize("name", list(SHAPES))
def test_honest_shapes_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(INTENDED))
def test_intended_differences(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, INTENDED)


MBPP_ROWS = [
    {
        "task_id": 1,
        "text": "Append x to a list in place.",
        "code": "def add_item(xs, x):\n    xs.append(x)\n",
        "test_list": ["a = [1]\nadd_item(a, 2)\nassert a == [1, 2]"],
    },
    {
        "task_id": 2,
        "text": "Generate the naturals.",
        "code": "def naturals():\n    i = 0\n    while True:\n        yield i\n        i += 1\n",
        "test_list": ["g = naturals()\nassert next(g) == 0\nassert next(g) == 1"],
    },
    {
        "task_id": 3,
        "text": "Sort in place and return the list.",
        "code": "def srt(xs):\n    xs.sort()\n    return xs\n",
        "test_list": ["a = [3, 1]\nassert srt(a) is a and a == [1, 3]"],
    },
]


@pytest.mark.parametrize("scoring", ["strict", "official"])
def test_mbpp_reference_solutions_of_ordinary_shapes_pass(tmp_path: Path, scoring: str) -> None:
    """In-place mutation, an endless generator read with next(), the same
    list returned: each reference solution passes in both models."""
    data = tmp_path / "mbpp.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in MBPP_ROWS))
    cfg = aioeval.load_config(
        overrides=[
            f"params.scoring={scoring}",
            "params.execute=true",
            f"params.dataset_path={data}",
        ]
    )
    spec = aioeval.RunSpec(benchmark="mbpp", config=cfg, out_dir=str(tmp_path / "out"))
    summary = anyio.run(lambda: aioeval.evaluate(spec))
    rows = read_results(tmp_path / "out")
    assert summary.complete and len(rows) == len(MBPP_ROWS)
    assert {r.problem_id: r.status for r in rows} == {
        str(r["task_id"]): "passed" for r in MBPP_ROWS
    }
