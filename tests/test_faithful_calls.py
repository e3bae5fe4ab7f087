"""How the test calls the candidate, judged as the single program judges it:
generators and iterators read by builtins, state kept across calls (caches,
mutable defaults), arguments and callables both ways (``*args``, keys,
partials, closures, the test's lambdas), deep recursion and many calls, and
threads on either side.

Each shape is a HumanEval-format problem with a right and a wrong answer,
scored in one strict and one official run through the real pipeline,
sandbox and verifier (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _body, _d, judged_alike, score_both

from aioeval.types import CandidateResult

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a decorator that keeps its function's name and docstring": (
        'import functools\n\n\ndef counted(fn):\n    """fn wrapped with functools.wraps, counting calls in .calls"""\n',
        "def check(candidate):\n    @candidate\n    def add(a, b=1):\n        'adds'\n        return a + b\n"
        "    assert add(1, b=2) == 3 and add.calls == 1\n"
        "    assert add.__name__ == 'add' and add.__doc__ == 'adds', (add.__name__, add.__doc__)\n",
        "counted",
        "    @functools.wraps(fn)\n    def wrapper(*a, **k):\n        wrapper.calls += 1\n        return fn(*a, **k)\n"
        "    wrapper.calls = 0\n    return wrapper\n",
        "    def wrapper(*a, **k):\n        wrapper.calls += 1\n        return fn(*a, **k)\n"
        "    wrapper.calls = 0\n    return wrapper\n",
    ),
    # generators and iterators
    "generator summed and zipped": (
        'def squares(n):\n    """yield i*i"""\n',
        "def check(candidate):\n    assert sum(candidate(4)) == 14\n    assert list(zip(candidate(3), 'abc')) == [(0, 'a'), (1, 'b'), (4, 'c')]\n    assert max(candidate(3)) == 4 and 9 in candidate(5)\n    assert dict(enumerate(candidate(2))) == {0: 0, 1: 1}\n",
        "squares",
        "    for i in range(n):\n        yield i * i\n",
        "    for i in range(1, n + 1):\n        yield i * i\n",
    ),
    "generator of pairs read by dict and sorted": (
        'def items(d):\n    """yield (v, k)"""\n',
        "def check(candidate):\n    assert dict(candidate({'a': 1})) == {1: 'a'}\n    assert sorted(candidate({'a': 2, 'b': 1})) == [(1, 'b'), (2, 'a')]\n",
        "items",
        "    for k, v in d.items():\n        yield v, k\n",
        "    for k, v in d.items():\n        yield k, v\n",
    ),
    "islice of an itertools result": (
        'import itertools\n\n\ndef evens():\n    """itertools count of evens"""\n',
        "import itertools\ndef check(candidate):\n    assert list(itertools.islice(candidate(), 3)) == [0, 2, 4]\n",
        "evens",
        "    return itertools.count(0, 2)\n",
        "    return itertools.count(0, 1)\n",
    ),
    "map and filter objects returned": (
        'def pos(xs):\n    """filter positives"""\n',
        "def check(candidate):\n    r = candidate([1, -1, 2])\n    assert list(r) == [1, 2]\n    assert list(r) == []\n",
        "pos",
        "    return filter(lambda x: x > 0, xs)\n",
        "    return map(abs, xs)\n",
    ),
    "permutations object read into a set": (
        'import itertools\n\n\ndef perms(s):\n    """permutations of s"""\n',
        "def check(candidate):\n    assert set(candidate('ab')) == {('a', 'b'), ('b', 'a')}\n    assert len(list(candidate('abc'))) == 6\n",
        "perms",
        "    return itertools.permutations(s)\n",
        "    return itertools.combinations(s, 2)\n",
    ),
    "range result": (
        'def upto(n):\n    """range(n)"""\n',
        "def check(candidate):\n    assert candidate(3) == range(3) and list(candidate(2)) == [0, 1] and candidate(4)[-1] == 3\n",
        "upto",
        "    return range(n)\n",
        "    return range(1, n)\n",
    ),
    # state across calls
    "lru_cache across calls": (
        'from functools import lru_cache\n\n\ndef fib(n):\n    """fib(n), fib(0)=0"""\n',
        "def check(candidate):\n    assert candidate(200) == 280571172992510140037611932413038677189525\n    assert [candidate(i) for i in range(6)] == [0, 1, 1, 2, 3, 5]\n",
        "fib",
        "    return _f(n)\n\n\n@lru_cache(None)\ndef _f(n):\n    return n if n < 2 else _f(n - 1) + _f(n - 2)\n",
        "    return _f(n)\n\n\n@lru_cache(None)\ndef _f(n):\n    return n if n < 2 else _f(n - 1) + _f(n - 2) + (n == 5)\n",
    ),
    "a decorator that binds the test's function's arguments by its signature": (
        "import functools\nimport inspect\n\n\ndef check_types(**expected):\n"
        '    """Decorator factory: TypeError(f"{name} must be {t.__name__}") unless each\n'
        '    named argument, bound with defaults applied, is an instance of its type."""\n',
        _d(
            """
            def check(candidate):
                @candidate(qty=int, name=str)
                def order(name, qty=1, *, note: str = ""):
                    return f"{qty}x{name}{note}"
                assert order("bolt") == "1xbolt" and order(qty=3, name="nut") == "3xnut"
                try:
                    order("bolt", "3")
                except TypeError as e:
                    assert str(e) == "qty must be int"
                else:
                    raise AssertionError("no TypeError")
            """
        ),
        "check_types",
        _body(
            """
            def deco(fn):
                sig = inspect.signature(fn)
                @functools.wraps(fn)
                def wrapper(*args, **kwargs):
                    bound = sig.bind(*args, **kwargs)
                    bound.apply_defaults()
                    for name, t in expected.items():
                        if not isinstance(bound.arguments.get(name), t):
                            raise TypeError(f"{name} must be {t.__name__}")
                    return fn(*args, **kwargs)
                return wrapper
            return deco
            """
        ),
        _body(
            """
            def deco(fn):
                names = list(inspect.signature(fn).parameters)
                def wrapper(*args, **kwargs):
                    for name, t in expected.items():
                        if name in kwargs and not isinstance(kwargs[name], t):
                            raise TypeError(f"{name} must be {t.__name__}")
                    return fn(*args, **kwargs)
                return wrapper
            return deco
            """
        ),
    ),
    "a decorator that copies the test's function's annotations and defaults": (
        'import functools\n\n\ndef traced(fn):\n    """fn wrapped with functools.wraps"""\n',
        _d(
            """
            def check(candidate):
                def area(w: int, h: int = 2, *, unit: str = "m") -> str:
                    return f"{w * h}{unit}"
                t = candidate(area)
                assert list(t.__annotations__) == ["w", "h", "unit", "return"]
                assert t.__wrapped__.__defaults__ == (2,) and t(3) == "6m"
                assert t.__wrapped__.__kwdefaults__ == {"unit": "m"}
            """
        ),
        "traced",
        "    @functools.wraps(fn)\n    def wrapper(*a, **k):\n        return fn(*a, **k)\n"
        "    return wrapper\n",
        "    def wrapper(*a, **k):\n        return fn(*a, **k)\n    wrapper.__wrapped__ = fn\n"
        "    return wrapper\n",
    ),
    "async for over the candidate's async generator": (
        "import asyncio\n\n\nasync def ticker(values):\n"
        '    """(index, value) pairs of values, stopping before the first None"""\n',
        _d(
            """
            import asyncio
            def check(candidate):
                async def take(vals):
                    return [x async for x in candidate(vals)]
                assert asyncio.run(take(["a", "b", None, "c"])) == [(0, "a"), (1, "b")]
                assert asyncio.run(take([])) == []
            """
        ),
        "ticker",
        _body(
            """
            for i, v in enumerate(values):
                await asyncio.sleep(0)
                if v is None:
                    return
                yield i, v
            """
        ),
        _body(
            """
            for i, v in enumerate(values):
                await asyncio.sleep(0)
                if v is not None:
                    yield i, v
            """
        ),
    ),
    "lru_cache decorator on the entry": (
        'def ways(n):\n    """stairs 1 or 2"""\n',
        "def check(candidate):\n    assert candidate(50) == 20365011074\n    assert candidate.cache_info().hits >= 0\n",
        "ways",
        "    return 1 if n < 2 else ways(n - 1) + ways(n - 2)\n\n\nimport functools\nways = functools.lru_cache(None)(ways)\n",
        "    return 1 if n < 2 else ways(n - 1) + ways(n - 2) + 1\n\n\nimport functools\nways = functools.lru_cache(None)(ways)\n",
    ),
    "mutable default argument accumulates": (
        'def log(x, acc=[]):\n    """append x to acc, return acc"""\n',
        "def check(candidate):\n    assert candidate(1) == [1]\n    assert candidate(2) == [1, 2]\n",
        "log",
        "    acc.append(x)\n    return acc\n",
        "    return acc + [x]\n",
    ),
    "test mutates the result and calls again": (
        'def make(n):\n    """[0] * n, new each call"""\n',
        "def check(candidate):\n    r = candidate(2)\n    r.append(9)\n    assert candidate(2) == [0, 0]\n",
        "make",
        "    return [0] * n\n",
        "    return [0] * (n + 1)\n",
    ),
    # arguments and callables
    "star args and kwargs": (
        'def pack(*args, **kw):\n    """(args, kw)"""\n',
        "def check(candidate):\n    assert candidate(*[1, 2], **{'a': 3}) == ((1, 2), {'a': 3})\n    assert candidate() == ((), {})\n",
        "pack",
        "    return args, kw\n",
        "    return list(args), kw\n",
    ),
    "kwargs order kept": (
        'def keys(**kw):\n    """list of names"""\n',
        "def check(candidate):\n    assert candidate(b=1, a=2, c=3) == ['b', 'a', 'c']\n",
        "keys",
        "    return list(kw)\n",
        "    return sorted(kw)\n",
    ),
    "operator.itemgetter as key": (
        'def order(xs, key):\n    """sorted by key"""\n',
        "import operator\ndef check(candidate):\n    assert candidate([(1, 'b'), (2, 'a')], operator.itemgetter(1)) == [(2, 'a'), (1, 'b')]\n",
        "order",
        "    return sorted(xs, key=key)\n",
        "    return sorted(xs)\n",
    ),
    "str.lower and functools.partial as callables": (
        'def apply(f, xs):\n    """[f(x)]"""\n',
        "import functools\ndef check(candidate):\n    assert candidate(str.lower, ['A', 'b']) == ['a', 'b']\n    assert candidate(functools.partial(pow, 2), [3]) == [8]\n    assert candidate(abs, [-1]) == [1]\n",
        "apply",
        "    return [f(x) for x in xs]\n",
        "    return xs\n",
    ),
    "candidate used via map, reduce and as a sort key": (
        'def neg(x):\n    """-x"""\n',
        "import functools\ndef check(candidate):\n    assert list(map(candidate, [1, 2])) == [-1, -2]\n    assert sorted([1, 3, 2], key=candidate) == [3, 2, 1]\n    assert functools.reduce(lambda a, b: a + candidate(b), [1, 2], 0) == -3\n",
        "neg",
        "    return -x\n",
        "    return x\n",
    ),
    "cmp_to_key with the candidate": (
        'def cmp(a, b):\n    """-1/0/1 by length then value"""\n',
        "import functools\ndef check(candidate):\n    assert sorted(['bb', 'a', 'ab'], key=functools.cmp_to_key(candidate)) == ['a', 'ab', 'bb']\n",
        "cmp",
        "    return (len(a) > len(b)) - (len(a) < len(b)) or (a > b) - (a < b)\n",
        "    return (len(a) > len(b)) - (len(a) < len(b))\n",
    ),
    "candidate's __name__ read": (
        'def f(x):\n    """x"""\n',
        "def check(candidate):\n    assert candidate.__name__ == 'f' and candidate(1) == 1\n",
        "f",
        "    return x\n",
        "    return -x\n",
    ),
    # recursion and many calls
    "deep recursion with a raised limit": (
        'import sys\nsys.setrecursionlimit(100000)\n\n\ndef depth(n):\n    """recursive count to n"""\n',
        "def check(candidate):\n    assert candidate(20000) == 20000\n",
        "depth",
        "    return 0 if n == 0 else 1 + depth(n - 1)\n",
        "    return 0 if n == 0 else 2 + depth(n - 1)\n",
    ),
    "deep recursion, limit raised in the completion": (
        'def depth(n):\n    """recursive count to n"""\n',
        "def check(candidate):\n    assert candidate(50000) == 50000\n",
        "depth",
        "    import sys\n    sys.setrecursionlimit(10 ** 6)\n    return _d(n)\n\n\ndef _d(n):\n    return 0 if n == 0 else 1 + _d(n - 1)\n",
        "    import sys\n    sys.setrecursionlimit(10 ** 6)\n    return _d(n) + 1\n\n\ndef _d(n):\n    return 0 if n == 0 else 1 + _d(n - 1)\n",
    ),
    "ten thousand calls": (
        'def f(x):\n    """3x + 1"""\n',
        "def check(candidate):\n    for i in range(10000):\n        assert candidate(i) == 3 * i + 1\n",
        "f",
        "    return 3 * x + 1\n",
        "    return 3 * x + (x != 9999)\n",
    ),
    "random tests with seeded random": (
        'def rev(s):\n    """s reversed"""\n',
        "import random, string\ndef check(candidate):\n    random.seed(0)\n    for _ in range(2000):\n        s = ''.join(random.choice(string.ascii_letters) for _ in range(random.randint(0, 20)))\n        assert candidate(s) == s[::-1]\n",
        "rev",
        "    return s[::-1]\n",
        "    return ''.join(reversed(s.lower()))\n",
    ),
    "candidate returns a generator the test reads item by item many times": (
        'def gen(n):\n    """yield 0..n-1"""\n',
        "def check(candidate):\n    total = 0\n    for v in candidate(20000):\n        total += v\n    assert total == sum(range(20000))\n",
        "gen",
        "    yield from range(n)\n",
        "    yield from range(n - 1)\n",
    ),
    "candidate returns an object, test calls its methods many times": (
        'class Counter2:\n    """inc() and value()"""\n',
        "def check(candidate):\n    c = candidate()\n    for _ in range(5000):\n        c.inc()\n    assert c.value() == 5000\n",
        "Counter2",
        "    def __init__(self):\n        self.n = 0\n    def inc(self):\n        self.n += 1\n    def value(self):\n        return self.n\n",
        "    def __init__(self):\n        self.n = 0\n    def inc(self):\n        self.n += 1\n    def value(self):\n        return self.n - 1\n",
    ),
    # threads
    "candidate maps the test's callback on threads": (
        'def pmap(f, xs):\n    """[f(x)] computed concurrently"""\n',
        "def check(candidate):\n    assert candidate(lambda v: v * 2, list(range(20))) == [v * 2 for v in range(20)]\n",
        "pmap",
        "    from concurrent.futures import ThreadPoolExecutor\n    with ThreadPoolExecutor(4) as ex:\n        return list(ex.map(f, xs))\n",
        "    from concurrent.futures import ThreadPoolExecutor\n    with ThreadPoolExecutor(4) as ex:\n        return list(ex.map(f, xs[1:]))\n",
    ),
    "candidate uses threads internally": (
        'def psum(xs):\n    """sum using threads"""\n',
        "def check(candidate):\n    assert candidate(list(range(100))) == 4950\n",
        "psum",
        "    import threading\n    out = []\n    ts = [threading.Thread(target=lambda c=c: out.append(sum(c))) for c in (xs[:50], xs[50:])]\n    [t.start() for t in ts]\n    [t.join() for t in ts]\n    return sum(out)\n",
        "    return sum(xs[:50])\n",
    ),
    # other
    "generator driven with send": (
        'def averager():\n    """coroutine: send numbers, yields running mean"""\n',
        "def check(candidate):\n    g = candidate()\n    next(g)\n    assert g.send(2) == 2.0 and g.send(4) == 3.0\n    g.close()\n",
        "averager",
        "    total, n, avg = 0, 0, None\n    while True:\n        x = yield avg\n        total += x\n        n += 1\n        avg = total / n\n",
        "    avg = None\n    while True:\n        x = yield avg\n        avg = float(x)\n",
    ),
    "candidate calls eval on the test's string": (
        'def calc(expr):\n    """evaluate an arithmetic expression"""\n',
        "def check(candidate):\n    assert candidate('2 * (3 + 4)') == 14 and candidate('7 / 2') == 3.5\n",
        "calc",
        "    return eval(expr)\n",
        "    return eval(expr.replace('/', '//'))\n",
    ),
    "candidate returns zip and enumerate objects": (
        'def pairs(a, b):\n    """(zip(a, b), enumerate(a))"""\n',
        "def check(candidate):\n    z, e = candidate([1, 2], 'xy')\n    assert list(z) == [(1, 'x'), (2, 'y')] and dict(e) == {0: 1, 1: 2}\n",
        "pairs",
        "    return zip(a, b), enumerate(a)\n",
        "    return zip(b, a), enumerate(a)\n",
    ),
    "candidate returns the test's lambda": (
        'def ident(f):\n    """f"""\n',
        "def check(candidate):\n    f = lambda: 1\n    assert candidate(f) is f and candidate(f)() == 1\n",
        "ident",
        "    return f\n",
        "    return lambda: f()\n",
    ),
    "candidate returns a closure the test calls with a callback": (
        'def compose(f):\n    """g such that g(h, x) = f(h(x))"""\n',
        "def check(candidate):\n    g = candidate(lambda v: v + 1)\n    assert g(lambda v: v * 10, 2) == 21\n",
        "compose",
        "    def g(h, x):\n        return f(h(x))\n    return g\n",
        "    def g(h, x):\n        return h(f(x))\n    return g\n",
    ),
    # more state, values and calls
    "recursion in a thread with a big stack": (
        'def depth(n):\n    """n, computed by recursion n deep"""\n',
        "def check(candidate):\n    assert candidate(200000) == 200000\n",
        "depth",
        "    import sys, threading\n    sys.setrecursionlimit(10 ** 6)\n    threading.stack_size(1 << 27)\n    out = []\n    def rec(k):\n        return 0 if k == 0 else 1 + rec(k - 1)\n    t = threading.Thread(target=lambda: out.append(rec(n)))\n    t.start()\n    t.join()\n    return out[0]\n",
        "    return n - 1\n",
    ),
    "a memoizing decorator on the test's recursive function, 80 calls deep across": (
        'def memoize(func):\n    """func with its results cached by its arguments."""\n',
        _d(
            """
            def check(candidate):
                @candidate
                def fib(n):
                    return n if n < 2 else fib(n - 1) + fib(n - 2)
                assert fib(80) == 23416728348467685
            """
        ),
        "memoize",
        "    cache = {}\n    def wrapper(*args):\n        if args not in cache:\n"
        "            cache[args] = func(*args)\n        return cache[args]\n    return wrapper\n",
        "    cache = {}\n    def wrapper(*args):\n        if args not in cache:\n"
        "            cache[args] = func(*args)\n        return cache[args] + 1\n    return wrapper\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("calls"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_calls_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
