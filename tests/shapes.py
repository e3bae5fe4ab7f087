"""Generated HumanEval-format problems of ordinary shapes, with honest answers.

For differential testing of the scoring models: each shape is a kind of
problem real datasets have (a signature-only prompt, a test that passes a
lambda, a class as the entry point, an argument changed in place, a numpy
result, ...), drawn with random names and constants, with one right answer
and some plausibly wrong ones. The official single program is the reference:
an honest answer's verdict must not depend on the scoring model.

``shapes_house_sets`` adds the shapes of a company's own set (class
skeletons, unittest-style tests, the environment, mocks, logging, aware
datetimes, paths, coroutines, linked lists, worker-thread callbacks).

`cases(seed, per_shape)` is deterministic for a seed; `sweep` scores every
answer in both models through the engine. ``tests/test_differential.py``
runs a few per shape; ``bench/differential.py`` the full sweep.
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import shapes_house_sets
from scored import score, write_set


@dataclass(frozen=True)
class Case:
    shape: str
    task_id: str
    prompt: str
    test: str
    entry: str
    answers: tuple[str, ...]
    """The right answer first, then the wrong ones."""


Draw = tuple[str, str, str, str, list[str]]
"""(prompt, test, entry, right answer, wrong answers)"""


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _name(r: random.Random, base: str) -> str:
    return f"{base}_{r.choice('abcdefgh')}{r.randrange(100)}"


def signature_only(r: random.Random) -> Draw:
    f, k = _name(r, "add"), r.randrange(1, 9)
    test = f"def check(candidate):\n    assert candidate(1, 2) == {3 + k}\n    assert candidate(0, 0) == {k}\n"
    return (
        f"def {f}(a, b):\n",
        test,
        f,
        f"    return a + b + {k}\n",
        ["    return a + b\n", f"    return a * b + {k}\n"],
    )


def lambda_argument(r: random.Random) -> Draw:
    f, k = _name(r, "apply"), r.randrange(2, 9)
    xs = [r.randrange(-5, 9) for _ in range(r.randrange(1, 6))]
    test = f"def check(candidate):\n    assert candidate(lambda v: v * {k}, {xs}) == {[x * k for x in xs]}\n"
    return (
        f'def {f}(fn, xs):\n    """fn on each item"""\n',
        test,
        f,
        "    return [fn(x) for x in xs]\n",
        ["    return xs\n", "    return [fn(x) for x in xs[1:]] + xs[:1]\n"],
    )


def key_and_class(r: random.Random) -> Draw:
    f = _name(r, "order")
    words = ["".join(r.choice("xyz") for _ in range(r.randrange(1, 5))) for _ in range(4)]
    test = _d(
        f"""
        class Box:
            def __init__(self, items):
                self.items = items
        def check(candidate):
            b = candidate({words!r}, len, Box)
            assert isinstance(b, Box) and b.items == {sorted(words, key=len)!r}
        """
    )
    return (
        f'def {f}(xs, key, kind):\n    """sorted by key, wrapped in kind"""\n',
        test,
        f,
        "    return kind(sorted(xs, key=key))\n",
        ["    return kind(sorted(xs))\n", "    return kind(list(reversed(sorted(xs, key=key))))\n"],
    )


def class_entry(r: random.Random) -> Draw:
    c, k = f"Tally{r.randrange(100)}", r.randrange(2, 9)
    test = _d(
        f"""
        def check(candidate):
            t = candidate({k})
            t.add(3)
            t.add(4)
            assert t.total() == {k + 7}
            assert t.count == 2
        """
    )
    right = "    def __init__(self, start):\n        self.t = start\n        self.count = 0\n    def add(self, x):\n        self.t += x\n        self.count += 1\n    def total(self):\n        return self.t\n"
    return (
        f'class {c}:\n    """adds numbers to a start value"""\n',
        test,
        c,
        right,
        [right.replace("self.t += x", "self.t = x"), right.replace("self.count += 1", "pass")],
    )


def endless_generator(r: random.Random) -> Draw:
    f, s, n = _name(r, "naturals"), r.randrange(5), r.randrange(2, 6)
    test = f"def check(candidate):\n    g = candidate({s})\n    assert [next(g) for _ in range({n})] == {list(range(s, s + n))}\n"
    return (
        f'def {f}(start):\n    """start, start + 1, ... forever"""\n',
        test,
        f,
        "    while True:\n        yield start\n        start += 1\n",
        ["    while True:\n        start += 1\n        yield start\n"],
    )


def finite_generator(r: random.Random) -> Draw:
    f, n = _name(r, "evens"), r.randrange(1, 8)
    test = f"def check(candidate):\n    assert list(candidate({n})) == {[i for i in range(n) if i % 2 == 0]}\n    assert sum(candidate(4)) == 2\n"
    return (
        f'def {f}(n):\n    """the even numbers below n, lazily"""\n',
        test,
        f,
        "    return (i for i in range(n) if i % 2 == 0)\n",
        ["    return (i for i in range(1, n) if i % 2 == 0)\n"],
    )


def mutate_list(r: random.Random) -> Draw:
    f, v = _name(r, "push"), r.randrange(10)
    test = f"def check(candidate):\n    a = [1]\n    assert candidate(a, {v}) is None\n    assert a == [1, {v}]\n"
    return (
        f'def {f}(xs, v):\n    """append v to xs in place"""\n',
        test,
        f,
        "    xs.append(v)\n",
        ["    xs = xs + [v]\n", "    xs.insert(0, v)\n"],
    )


def mutate_dict_aliased(r: random.Random) -> Draw:
    f, k = _name(r, "bump"), r.choice("abc")
    test = _d(
        f"""
        def check(candidate):
            inner = [0]
            d = {{{k!r}: inner, 'z': inner}}
            candidate(d, {k!r})
            assert d[{k!r}] is inner and inner == [1] and d['z'] is d[{k!r}]
        """
    )
    return (
        f'def {f}(d, k):\n    """add one to d[k][0] in place"""\n',
        test,
        f,
        "    d[k][0] += 1\n",
        ["    d[k] = [d[k][0] + 1]\n"],
    )


def new_object(r: random.Random) -> Draw:
    f = _name(r, "copy")
    xs = [r.randrange(9) for _ in range(r.randrange(1, 5))]
    test = f"def check(candidate):\n    a = {xs}\n    b = candidate(a)\n    assert b == a and b is not a\n    b.append(1)\n    assert a == {xs}\n"
    return (
        f'def {f}(xs):\n    """a copy of xs"""\n',
        test,
        f,
        "    return list(xs)\n",
        ["    return xs\n"],
    )


def same_object(r: random.Random) -> Draw:
    f = _name(r, "sort_in_place")
    xs = [r.randrange(9) for _ in range(r.randrange(2, 6))]
    test = (
        f"def check(candidate):\n    a = {xs}\n    assert candidate(a) is a and a == {sorted(xs)}\n"
    )
    return (
        f'def {f}(xs):\n    """sort xs in place and return it"""\n',
        test,
        f,
        "    xs.sort()\n    return xs\n",
        ["    return sorted(xs)\n"],
    )


def second_function(r: random.Random) -> Draw:
    f, g, k = _name(r, "inc"), _name(r, "twice"), r.randrange(2, 5)
    test = f"def check(candidate):\n    assert candidate(1) == 2\n    assert {g}(3) == {3 * k}\n"
    return (
        f'def {f}(x):\n    """x + 1; also write {g}(x) = {k} * x"""\n',
        test,
        f,
        f"    return x + 1\n\n\ndef {g}(x):\n    return {k} * x\n",
        [f"    return x + 1\n\n\ndef {g}(x):\n    return {k + 1} * x\n"],
    )


def test_prints(r: random.Random) -> Draw:
    f = _name(r, "ident")
    test = "def check(candidate):\n    print('checking', candidate(1), [1, 2])\n    assert candidate(1) == 1\n"
    return (f'def {f}(x):\n    """x"""\n', test, f, "    return x\n", ["    return 0\n"])


def numpy_bool(r: random.Random) -> Draw:
    f, t = _name(r, "positive"), r.randrange(3)
    test = f"def check(candidate):\n    assert candidate({t + 1}) is True\n    assert candidate({t - 5}) is False\n"
    return (
        f'import numpy as np\n\n\ndef {f}(x):\n    """is x > {t}"""\n',
        test,
        f,
        f"    return bool(x > {t})\n",
        [f"    return np.bool_(x > {t})\n", f"    return x > {t + 10}\n"],
    )


def deque_and_array(r: random.Random) -> Draw:
    f, k = _name(r, "twice"), r.randrange(2, 5)
    xs = [r.randrange(9) for _ in range(r.randrange(1, 5))]
    test = _d(
        f"""
        import numpy as np
        def check(candidate):
            d, a = candidate({xs})
            assert tuple(d) == {tuple(xs)!r} and type(d).__name__ == 'deque'
            assert np.array_equal(a, np.array({[x * k for x in xs]})) and a.dtype.kind == 'i'
            assert a.tolist() == {[x * k for x in xs]}
        """
    )
    return (
        f'import numpy as np\nfrom collections import deque\n\n\ndef {f}(xs):\n    """(deque of xs, array of xs times {k})"""\n',
        test,
        f,
        f"    return deque(xs), np.array(xs) * {k}\n",
        ["    return deque(xs), np.array(xs)\n", f"    return list(xs), np.array(xs) * {k}\n"],
    )


def standard_types(r: random.Random) -> Draw:
    f = _name(r, "stats")
    xs = [r.randrange(1, 4) for _ in range(r.randrange(2, 6))]
    test = _d(
        f"""
        from collections import Counter, OrderedDict
        from decimal import Decimal
        from fractions import Fraction
        def check(candidate):
            c, m, s, o = candidate({xs})
            assert c == Counter({xs}) and type(c) is Counter
            assert m == Fraction({sum(xs)}, {len(xs)}) and type(m) is Fraction
            assert s == Decimal({sum(xs)}) and type(s) is Decimal
            assert list(o.items()) == [(x, x) for x in dict.fromkeys({xs})] and type(o) is OrderedDict
        """
    )
    head = "from collections import Counter, OrderedDict\nfrom decimal import Decimal\nfrom fractions import Fraction\n\n\n"
    return (
        head
        + f'def {f}(xs):\n    """(Counter, mean as Fraction, sum as Decimal, OrderedDict)"""\n',
        test,
        f,
        "    return Counter(xs), Fraction(sum(xs), len(xs)), Decimal(sum(xs)), OrderedDict((x, x) for x in xs)\n",
        ["    return Counter(xs), sum(xs) / len(xs), Decimal(sum(xs)), {}\n"],
    )


def prompt_exception(r: random.Random) -> Draw:
    f, e = _name(r, "root"), f"Negative{r.randrange(100)}"
    test = _d(
        f"""
        def check(candidate):
            try:
                candidate(-1)
            except {e} as exc:
                assert isinstance(exc, ValueError) and exc.args == (-1,)
            else:
                assert False, 'no exception'
            assert candidate(9) == 3
        """
    )
    return (
        f'class {e}(ValueError):\n    pass\n\n\ndef {f}(x):\n    """raise {e}(x) below 0"""\n',
        test,
        f,
        f"    if x < 0:\n        raise {e}(x)\n    return int(x ** 0.5)\n",
        ["    if x < 0:\n        raise ValueError(x)\n    return int(x ** 0.5)\n"],
    )


def expected_builtin_exception(r: random.Random) -> Draw:
    f = _name(r, "parse")
    test = _d(
        """
        def check(candidate):
            assert candidate('12') == 12
            for bad in ['', 'x1']:
                try:
                    candidate(bad)
                except ValueError:
                    continue
                raise AssertionError('no ValueError for ' + repr(bad))
        """
    )
    return (
        f'def {f}(s):\n    """int(s), ValueError when s is not a number"""\n',
        test,
        f,
        "    return int(s)\n",
        ["    try:\n        return int(s)\n    except ValueError:\n        return 0\n"],
    )


def dataclass_compare(r: random.Random) -> Draw:
    f, c = _name(r, "mirror"), f"Point{r.randrange(100)}"
    a, b = r.randrange(9), r.randrange(9)
    test = f"def check(candidate):\n    assert candidate({c}({a}, {b})) == {c}({b}, {a})\n    assert candidate({c}(1, 1)) != {c}(0, 5)\n"
    return (
        f'from dataclasses import dataclass\n\n\n@dataclass\nclass {c}:\n    x: int\n    y: int\n\n\ndef {f}(p):\n    """{c}(p.y, p.x)"""\n',
        test,
        f,
        f"    return {c}(p.y, p.x)\n",
        [f"    return {c}(p.x + 1, p.y)\n"],
    )


def helper_reemitted(r: random.Random) -> Draw:
    f, h, k = _name(r, "plus_one"), _name(r, "scale"), r.randrange(2, 5)
    helper = f"def {h}(x):\n    return {k} * x\n\n\n"
    test = f"def check(candidate):\n    assert candidate({h}(2)) == {2 * k + 1}\n"
    return (
        helper + f'def {f}(x):\n    """x + 1"""\n',
        test,
        f,
        helper + f"def {f}(x):\n    return x + 1\n",
        [helper + f"def {f}(x):\n    return x + 2\n"],
    )


def namedtuple_result(r: random.Random) -> Draw:
    f, x = _name(r, "pair"), r.randrange(1, 9)
    test = f"def check(candidate):\n    p = candidate({x})\n    assert p == ({x}, {-x}) and p.a == {x} and p.b == {-x}\n    assert isinstance(p, tuple) and len(p) == 2\n"
    return (
        f'from collections import namedtuple\nPair = namedtuple("Pair", "a b")\n\n\ndef {f}(x):\n    """Pair(x, -x)"""\n',
        test,
        f,
        "    return Pair(x, -x)\n",
        ["    return Pair(-x, x)\n"],
    )


def keywords_and_defaults(r: random.Random) -> Draw:
    f, k = _name(r, "scale"), r.randrange(2, 5)
    test = f"def check(candidate):\n    assert candidate(3) == {3 * k}\n    assert candidate(3, off=1, k=3) == 10\n    assert candidate(x=2, k=1) == 2\n"
    return (
        f'def {f}(x, k={k}, *, off=0):\n    """x * k + off"""\n',
        test,
        f,
        "    return x * k + off\n",
        ["    return x * k\n"],
    )


def floats_nan_bigints(r: random.Random) -> Draw:
    f, n = _name(r, "numbers"), r.randrange(100, 400)
    test = _d(
        f"""
        import math
        def check(candidate):
            a, b, c, d = candidate({n})
            assert abs(a - {n} / 3) < 1e-9 and math.isnan(b) and c == 2 ** {n}
            assert d == float('inf') and str(-0.0) == '-0.0'
        """
    )
    return (
        f'def {f}(x):\n    """(x / 3, nan, 2 ** x, inf)"""\n',
        test,
        f,
        "    return x / 3, float('nan'), 2 ** x, float('inf')\n",
        [
            "    return x / 3, 0.0, 2 ** x, float('inf')\n",
            "    return x // 3, float('nan'), 2 ** x, 1e308\n",
        ],
    )


def global_state(r: random.Random) -> Draw:
    f = _name(r, "remember")
    test = "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(2) == 2\n    assert candidate(7) == 3\n"
    return (
        f'SEEN = []\n\n\ndef {f}(x):\n    """record x; return how many were recorded"""\n',
        test,
        f,
        "    SEEN.append(x)\n    return len(SEEN)\n",
        ["    return len(SEEN) + 1\n"],
    )


def enum_member(r: random.Random) -> Draw:
    f = _name(r, "parse")
    test = "def check(candidate):\n    assert candidate('r') == Color.RED\n    assert candidate('b') is Color.BLUE\n    assert candidate('r') != Color.BLUE\n    assert candidate('r').value == 1\n"
    return (
        f'from enum import Enum\n\n\nclass Color(Enum):\n    RED = 1\n    BLUE = 2\n\n\ndef {f}(c):\n    """r -> RED, b -> BLUE"""\n',
        test,
        f,
        "    return Color.RED if c == 'r' else Color.BLUE\n",
        ["    return Color.BLUE\n"],
    )


def identity_objects(r: random.Random) -> Draw:
    f = _name(r, "pick")
    test = "def check(candidate):\n    a, b = Node(), Node()\n    assert candidate(a, b, True) is a\n    assert candidate(a, b, False) == b\n    assert candidate(a, b, True) != b\n"
    return (
        f'class Node:\n    pass\n\n\ndef {f}(a, b, first):\n    """a if first else b"""\n',
        test,
        f,
        "    return a if first else b\n",
        ["    return b if first else a\n"],
    )


def decorated(r: random.Random) -> Draw:
    f, n = _name(r, "fib"), r.randrange(20, 60)
    fibs = [0, 1]
    while len(fibs) <= n:
        fibs.append(fibs[-1] + fibs[-2])
    test = f"def check(candidate):\n    assert candidate({n}) == {fibs[n]}\n    assert candidate(1) == 1\n"
    body = f"    return n if n < 2 else {f}(n - 1) + {f}(n - 2)\n"
    return (
        f"import functools\n\n\n@functools.lru_cache(maxsize=None)\ndef {f}(n):\n"
        '    """the n-th Fibonacci number"""\n',
        test,
        f,
        body,
        [body.replace("n < 2", "n < 3")],
    )


def closure_result(r: random.Random) -> Draw:
    f, k = _name(r, "adder"), r.randrange(1, 9)
    test = f"def check(candidate):\n    add = candidate({k})\n    assert add(1) == {k + 1} and add(-{k}) == 0\n    assert callable(add)\n"
    return (
        f'def {f}(k):\n    """a function that adds k"""\n',
        test,
        f,
        "    def add(x):\n        return x + k\n    return add\n",
        ["    return lambda x: x - k\n"],
    )


def recursion(r: random.Random) -> Draw:
    f = _name(r, "flatten")
    test = "def check(candidate):\n    assert candidate([1, [2, [3, [4]]], 5]) == [1, 2, 3, 4, 5]\n    assert candidate([]) == []\n"
    return (
        f'def {f}(xs):\n    """flatten nested lists"""\n',
        test,
        f,
        f"    out = []\n    for x in xs:\n        out.extend({f}(x) if isinstance(x, list) else [x])\n    return out\n",
        ["    return [x for x in xs if not isinstance(x, list)]\n"],
    )


def bytes_values(r: random.Random) -> Draw:
    f, k = _name(r, "xor"), r.randrange(1, 255)
    data = bytes(r.randrange(256) for _ in range(4))
    test = f"def check(candidate):\n    b = bytearray({data!r})\n    out = candidate(b, {k})\n    assert out == bytes(x ^ {k} for x in {data!r}) and type(out) is bytes\n    assert b == bytearray({data!r})\n"
    return (
        f'def {f}(data, k):\n    """each byte xor k, as bytes"""\n',
        test,
        f,
        "    return bytes(x ^ k for x in data)\n",
        [
            "    return bytearray(x ^ k for x in data)\n",
            "    data[0] = 0\n    return bytes(x ^ k for x in data)\n",
        ],
    )


def sets_and_dict_order(r: random.Random) -> Draw:
    f = _name(r, "group")
    words = r.sample(["ant", "bee", "cat", "ape", "bat", "cow"], 4)
    groups: dict[str, list[str]] = {}
    for w in words:
        groups.setdefault(w[0], []).append(w)
    test = _d(
        f"""
        def check(candidate):
            d, s = candidate({words!r})
            assert list(d.items()) == {list(groups.items())!r}
            assert s == {set(groups)!r} and frozenset(s) == frozenset({sorted(groups)!r})
        """
    )
    return (
        f'def {f}(words):\n    """(words by first letter in order of appearance, set of letters)"""\n',
        test,
        f,
        "    d = {}\n    for w in words:\n        d.setdefault(w[0], []).append(w)\n    return d, set(d)\n",
        [
            "    d = {}\n    for w in words:\n        d.setdefault(w[0], []).append(w)\n    return d, sorted(d)\n"
        ],
    )


def tabs_indentation(r: random.Random) -> Draw:
    f, k = _name(r, "tabbed"), r.randrange(1, 9)
    test = f"def check(candidate):\n\tassert candidate(1) == {k + 1}\n"
    return (
        f'def {f}(x):\n\t"""x + {k}"""\n',
        test,
        f,
        f"\ty = x + {k}\n\treturn y\n",
        [f"\treturn x - {k}\n"],
    )


def metadata(r: random.Random) -> Draw:
    f = _name(r, "square")
    test = "METADATA = {'author': 'team', 'dataset': 'test'}\n\n\ndef check(candidate):\n    assert METADATA['author'] == 'team'\n    assert candidate(3) == 9\n"
    return (
        f'def {f}(x):\n    """x squared"""\n',
        test,
        f,
        "    return x * x\n",
        ["    return x + x\n"],
    )


def completion_imports(r: random.Random) -> Draw:
    f, n = _name(r, "smallest"), r.randrange(1, 4)
    xs = [r.randrange(50) for _ in range(6)]
    test = f"def check(candidate):\n    assert candidate({xs}, {n}) == {sorted(xs)[:n]}\n"
    return (
        f'def {f}(xs, n):\n    """the n smallest, ascending"""\n',
        test,
        f,
        "    import heapq\n    return heapq.nsmallest(n, xs)\n",
        ["    import heapq\n    return heapq.nlargest(n, xs)\n"],
    )


def str_of_object(r: random.Random) -> Draw:
    f, x = _name(r, "money"), r.randrange(1, 99)
    test = f"def check(candidate):\n    m = candidate({x})\n    assert str(m) == '${x}.00' and repr(m) == 'Money({x})'\n    assert f'{{m}}' == '${x}.00'\n"
    return (
        f'class Money:\n    def __init__(self, n):\n        self.n = n\n    def __str__(self):\n        return f"${{self.n}}.00"\n    def __repr__(self):\n        return f"Money({{self.n}})"\n\n\ndef {f}(n):\n    """Money(n)"""\n',
        test,
        f,
        "    return Money(n)\n",
        ["    return Money(n + 1)\n"],
    )


def results_as_keys(r: random.Random) -> Draw:
    f = _name(r, "pairs")
    test = "def check(candidate):\n    ps = candidate(3)\n    seen = {p: 1 for p in ps}\n    assert (0, 1) in seen and len(set(ps)) == len(ps) == 3\n    assert sorted(ps, reverse=True)[0] == (1, 2)\n"
    return (
        f'def {f}(n):\n    """all (i, j) with i < j < n"""\n',
        test,
        f,
        "    return [(i, j) for i in range(n) for j in range(i + 1, n)]\n",
        ["    return [(i, j) for i in range(n) for j in range(i, n)]\n"],
    )


def seeded_random(r: random.Random) -> Draw:
    f = _name(r, "total")
    test = "import random\n\n\ndef check(candidate):\n    random.seed(7)\n    for _ in range(20):\n        xs = [random.randint(-9, 9) for _ in range(random.randint(0, 5))]\n        assert candidate(xs) == sum(xs)\n"
    return (
        f'def {f}(xs):\n    """sum of xs"""\n',
        test,
        f,
        "    return sum(xs)\n",
        ["    return sum(xs[1:])\n"],
    )


def name_and_isinstance(r: random.Random) -> Draw:
    f = _name(r, "halve")
    test = f"def check(candidate):\n    assert candidate.__name__ == {f!r}\n    assert isinstance(candidate(4), int) and candidate(4) == 2\n    assert isinstance(candidate(5), int)\n"
    return (
        f'def {f}(x):\n    """x // 2"""\n',
        test,
        f,
        "    return x // 2\n",
        ["    return x / 2\n"],
    )


def many_calls(r: random.Random) -> Draw:
    f, n = _name(r, "cube"), r.randrange(100, 300)
    test = f"def check(candidate):\n    for i in range({n}):\n        assert candidate(i) == i ** 3, i\n"
    return (
        f'def {f}(x):\n    """x cubed"""\n',
        test,
        f,
        "    return x * x * x\n",
        [f"    return x ** 3 if x < {n - 1} else 0\n"],
    )


def prompt_object_mutated(r: random.Random) -> Draw:
    f, v = _name(r, "mark"), r.randrange(9)
    test = f"def check(candidate):\n    n = Node({v})\n    assert candidate(n) is None\n    assert n.seen is True and n.val == {v + 1}\n"
    return (
        f'class Node:\n    def __init__(self, val):\n        self.val = val\n        self.seen = False\n\n\ndef {f}(node):\n    """mark node seen and add one to its val"""\n',
        test,
        f,
        "    node.seen = True\n    node.val += 1\n",
        ["    node.seen = True\n"],
    )


def test_object_read(r: random.Random) -> Draw:
    f, k = _name(r, "area"), r.randrange(1, 9)
    test = _d(
        f"""
        class Rect:
            def __init__(self, w, h):
                self.w, self.h = w, h
            def scale(self, k):
                return Rect(self.w * k, self.h * k)
        def check(candidate):
            assert candidate(Rect(2, {k})) == {2 * k}
            assert candidate(Rect(1, 1).scale(3)) == 9
        """
    )
    return (
        f'def {f}(rect):\n    """rect.w * rect.h"""\n',
        test,
        f,
        "    return rect.w * rect.h\n",
        ["    return rect.w + rect.h\n"],
    )


def iterator_argument(r: random.Random) -> Draw:
    f = _name(r, "take_two")
    test = "def check(candidate):\n    it = iter([5, 6, 7])\n    assert candidate(it) == [5, 6]\n    assert next(it) == 7\n    assert candidate(x for x in 'ab') == ['a', 'b']\n"
    return (
        f'def {f}(it):\n    """the first two items of an iterator"""\n',
        test,
        f,
        "    return [next(it), next(it)]\n",
        ["    return list(it)[:2]\n"],
    )


def nested_results(r: random.Random) -> Draw:
    f = _name(r, "index")
    words = r.sample(["a", "b", "c", "d"], 3)
    expected = {(w, i): [i] * 2 for i, w in enumerate(words)}
    test = f"def check(candidate):\n    assert candidate({words!r}) == {expected!r}\n"
    return (
        f'def {f}(words):\n    """{{(w, i): [i, i]}} for each word"""\n',
        test,
        f,
        "    return {(w, i): [i, i] for i, w in enumerate(words)}\n",
        ["    return {(w, i): (i, i) for i, w in enumerate(words)}\n"],
    )


def assert_message(r: random.Random) -> Draw:
    f = _name(r, "neg")
    test = "def check(candidate):\n    for x in range(-3, 4):\n        assert candidate(x) == -x, f'wrong for {x}'\n"
    return (f'def {f}(x):\n    """-x"""\n', test, f, "    return -x\n", ["    return abs(x)\n"])


SHAPES: dict[str, Callable[[random.Random], Draw]] = {
    fn.__name__.replace("_", "-"): fn
    for fn in (
        signature_only,
        lambda_argument,
        key_and_class,
        class_entry,
        endless_generator,
        finite_generator,
        mutate_list,
        mutate_dict_aliased,
        new_object,
        same_object,
        second_function,
        test_prints,
        numpy_bool,
        deque_and_array,
        standard_types,
        prompt_exception,
        expected_builtin_exception,
        dataclass_compare,
        helper_reemitted,
        namedtuple_result,
        keywords_and_defaults,
        floats_nan_bigints,
        global_state,
        enum_member,
        identity_objects,
        decorated,
        closure_result,
        recursion,
        bytes_values,
        sets_and_dict_order,
        tabs_indentation,
        metadata,
        completion_imports,
        str_of_object,
        results_as_keys,
        seeded_random,
        name_and_isinstance,
        many_calls,
        prompt_object_mutated,
        test_object_read,
        iterator_argument,
        nested_results,
        assert_message,
    )
}
SHAPES.update(shapes_house_sets.SHAPES)


def cases(seed: int, per_shape: int) -> list[Case]:
    """``per_shape`` drawn problems of every shape, each with its answers."""
    out = []
    for shape, draw in SHAPES.items():
        r = random.Random(f"{seed}:{shape}")
        for i in range(per_shape):
            prompt, test, entry, right, wrong = draw(r)
            out.append(Case(shape, f"{shape}/{i}", prompt, test, entry, (right, *wrong)))
    return out


@dataclass(frozen=True)
class Sweep:
    """Verdicts of every answer in both models, keyed by (task id, answer)."""

    strict: dict[tuple[str, int], tuple[str, str]]
    official: dict[tuple[str, int], tuple[str, str]]

    def disagreements(self) -> dict[tuple[str, int], tuple[str, str, str]]:
        """(official status, strict status, strict reason) where they differ."""
        return {
            k: (self.official[k][0], s[0], s[1])
            for k, s in self.strict.items()
            if self.official.get(k, ("missing", ""))[0] != s[0]
        }

    def miscast(self, cases: list[Case]) -> list[tuple[str, int, str]]:
        """Answers the official model does not judge as drawn (the right
        answer first, passing; the wrong ones not): a generator bug."""
        out = []
        for case in cases:
            for i in range(len(case.answers)):
                status = self.official[(case.task_id, i)][0]
                if (status == "passed") != (i == 0):
                    out.append((case.task_id, i, status))
        return out


def sweep(cases: list[Case], tmp: Path) -> Sweep:
    """Score every answer of ``cases`` in both models through the engine."""
    problems = [
        {"task_id": c.task_id, "prompt": c.prompt, "test": c.test, "entry_point": c.entry}
        for c in cases
    ]
    samples = [{"task_id": c.task_id, "completion": a} for c in cases for a in c.answers]
    write_set(tmp, problems, samples)
    strict, official = (score(tmp, m, timeout_s=5) for m in ("strict", "official"))
    return Sweep(
        strict={k: (r.status, r.reason) for k, r in strict.items()},
        official={k: (r.status, r.reason) for k, r in official.items()},
    )
