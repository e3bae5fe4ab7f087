"""Held-out shapes: honest programs that an earlier strict scoring judged
otherwise than the official single program, found by differential testing
beyond ``tests/shapes.py``. Each is a HumanEval-format problem with a right
and a wrong answer, scored in one strict and one official run through the
real pipeline, sandbox and verifier (as in ``test_faithful``).

``LIMITS`` are the shapes strict scoring still judges otherwise, each
listed in docs/strict-scoring.md with its reason."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a date computed from a date the test passes": (
        _d(
            '''
            import datetime
            def next_day(d):
                """the day after d"""
            '''
        ),
        _d(
            """
            import datetime
            def check(candidate):
                assert candidate(datetime.date(2020, 2, 28)) == datetime.date(2020, 2, 29)
                assert candidate(datetime.date(2021, 12, 31)) == datetime.date(2022, 1, 1)
            """
        ),
        "next_day",
        "    return d + datetime.timedelta(days=1)\n",
        "    return d\n",
    ),
    "a timedelta between datetimes": (
        _d(
            '''
            from datetime import datetime, timedelta
            def gap(a, b):
                """b - a"""
            '''
        ),
        _d(
            """
            from datetime import datetime, timedelta
            def check(candidate):
                assert candidate(datetime(2020,1,1), datetime(2020,1,2,3)) == timedelta(days=1, hours=3)
            """
        ),
        "gap",
        "    return b - a\n",
        "    return a - b\n",
    ),
    "a date the test passes, formatted by the candidate": (
        _d(
            '''
            import datetime
            def weekday_name(d):
                """name of the weekday"""
            '''
        ),
        _d(
            """
            import datetime
            def check(candidate):
                assert candidate(datetime.date(2024, 1, 1)) == 'Monday'
            """
        ),
        "weekday_name",
        "    return d.strftime('%A')\n",
        "    return 'Sunday'\n",
    ),
    "an aware datetime in UTC": (
        _d(
            '''
            from datetime import datetime, timezone, timedelta
            def to_utc(d):
                """d in UTC"""
            '''
        ),
        _d(
            """
            from datetime import datetime, timezone, timedelta
            def check(candidate):
                d = datetime(2024, 1, 1, 12, tzinfo=timezone(timedelta(hours=2)))
                r = candidate(d)
                assert r == datetime(2024, 1, 1, 10, tzinfo=timezone.utc) and r.tzinfo is timezone.utc
                assert r.isoformat() == '2024-01-01T10:00:00+00:00'
            """
        ),
        "to_utc",
        "    return d.astimezone(timezone.utc)\n",
        "    return d.replace(tzinfo=timezone.utc)\n",
    ),
    "a list of dates sorted in place": (
        _d(
            '''
            from datetime import date
            def sort_dates(ds):
                """ds sorted, in place, returned"""
            '''
        ),
        _d(
            """
            from datetime import date
            def check(candidate):
                ds = [date(2024, 3, 1), date(2023, 1, 1)]
                r = candidate(ds)
                assert r is ds and ds == [date(2023, 1, 1), date(2024, 3, 1)]
            """
        ),
        "sort_dates",
        "    ds.sort()\n    return ds\n",
        "    return sorted(ds)\n",
    ),
    "dict keys view compared with a set": (
        _d(
            '''
            def keys_of(d):
                """the keys of d"""
            '''
        ),
        _d(
            """
            def check(candidate):
                assert candidate({'a': 1, 'b': 2}) == {'a', 'b'}
                assert candidate({}) == set()
            """
        ),
        "keys_of",
        "    return d.keys()\n",
        "    return d.values()\n",
    ),
    "dict items view compared with a set": (
        _d(
            '''
            def items_of(d):
                """the items of d"""
            '''
        ),
        _d(
            """
            def check(candidate):
                assert candidate({'a': 1}) == {('a', 1)}
            """
        ),
        "items_of",
        "    return d.items()\n",
        "    return d.keys()\n",
    ),
    "keys view read as a set, a list and by len": (
        _d(
            '''
            def live_keys(d):
                """d.keys()"""
            '''
        ),
        _d(
            """
            def check(candidate):
                d = {'a': 1}
                k = candidate(d)
                assert k == {'a'} and list(k) == ['a'] and 'a' in k and len(k) == 1
            """
        ),
        "live_keys",
        "    return d.keys()\n",
        "    return {'b': 1}.keys()\n",
    ),
    "a namedtuple of the prompt, passed and sorted": (
        _d(
            '''
            from collections import namedtuple
            P = namedtuple('P', 'x y')
            def order(ps):
                """ps sorted"""
            '''
        ),
        _d(
            """
            def check(candidate):
                assert candidate([P(2, 1), P(1, 5)]) == [P(1, 5), P(2, 1)]
            """
        ),
        "order",
        "    return sorted(ps)\n",
        "    return list(ps)\n",
    ),
    "namedtuples of the prompt deduplicated by the candidate": (
        _d(
            '''
            from collections import namedtuple
            P = namedtuple('P', 'x y')
            def distinct(ps):
                """how many distinct points"""
            '''
        ),
        _d(
            """
            def check(candidate):
                assert candidate([P(2, 1), P(2, 1), P(1, 1)]) == 2
            """
        ),
        "distinct",
        "    return len(set(ps))\n",
        "    return len(ps)\n",
    ),
    "a namedtuple of the prompt checked with isinstance": (
        _d(
            '''
            from collections import namedtuple
            P = namedtuple('P', 'x y')
            def swap(p):
                """P(p.y, p.x)"""
            '''
        ),
        _d(
            """
            def check(candidate):
                r = candidate(P(1, 2))
                assert isinstance(r, P) and r == P(2, 1) and r.x == 2
            """
        ),
        "swap",
        "    return P(p.y, p.x)\n",
        "    return (p.y, p.x)\n",
    ),
    "a namedtuple of the test's, sorted and deduplicated": (
        _d(
            '''
            def order(ps):
                """ps sorted, deduplicated"""
            '''
        ),
        _d(
            """
            from collections import namedtuple
            P = namedtuple('P', 'x y')
            def check(candidate):
                assert candidate([P(2, 1), P(1, 5), P(2, 1)]) == [P(1, 5), P(2, 1)]
            """
        ),
        "order",
        "    return sorted(set(ps))\n",
        "    return sorted(ps)\n",
    ),
    "namedtuples of the test's as dict keys": (
        _d(
            '''
            def freq(items):
                """{item: count}"""
            '''
        ),
        _d(
            """
            from collections import namedtuple
            P = namedtuple('P', 'x y')
            def check(candidate):
                d = candidate([P(0, 0), P(0, 0), P(1, 1)])
                assert d == {P(0, 0): 2, P(1, 1): 1}
            """
        ),
        "freq",
        "    d = {}\n    for i in items:\n        d[i] = d.get(i, 0) + 1\n    return d\n",
        "    return {i: 1 for i in items}\n",
    ),
    "the candidate sets an attribute on the test's object": (
        _d(
            '''
            def visit(nodes):
                """mark each node visited"""
            '''
        ),
        _d(
            """
            class N:
                def __init__(self):
                    self.visited = False
            def check(candidate):
                ns = [N(), N()]
                candidate(ns)
                assert all(n.visited for n in ns)
            """
        ),
        "visit",
        "    for n in nodes:\n        n.visited = True\n",
        "    nodes[0].visited = True\n",
    ),
    "the truth value of the test's object": (
        _d(
            '''
            def count(nodes):
                """how many nodes are not None"""
            '''
        ),
        _d(
            """
            class N:
                pass
            def check(candidate):
                assert candidate([N(), None, N()]) == 2
            """
        ),
        "count",
        "    return sum(1 for n in nodes if n)\n",
        "    return len(nodes)\n",
    ),
    "the test's class with __add__, summed by the candidate": (
        _d(
            '''
            def total(vs):
                """sum of vectors"""
            '''
        ),
        _d(
            """
            class V:
                def __init__(self, x):
                    self.x = x
                def __add__(self, o):
                    return V(self.x + (o.x if isinstance(o, V) else o))
                __radd__ = __add__
            def check(candidate):
                assert candidate([V(1), V(2)]).x == 3
            """
        ),
        "total",
        "    return sum(vs)\n",
        "    return vs[0]\n",
    ),
    "an exception of the prompt with an attribute": (
        _d(
            '''
            class InsufficientFunds(Exception):
                def __init__(self, need):
                    super().__init__(f"need {need}")
                    self.need = need
            def withdraw(bal, amt):
                """new balance; raise InsufficientFunds(amt - bal) if short"""
            '''
        ),
        _d(
            """
            def check(candidate):
                assert candidate(10, 3) == 7
                try:
                    candidate(1, 5)
                except InsufficientFunds as e:
                    assert e.need == 4
                    assert str(e) == 'need 4'
                else:
                    assert False
            """
        ),
        "withdraw",
        "    if amt > bal:\n        raise InsufficientFunds(amt - bal)\n    return bal - amt\n",
        "    if amt > bal:\n        raise InsufficientFunds(bal - amt)\n    return bal - amt\n",
    ),
    "an exception of the prompt with its own __str__": (
        _d(
            '''
            class ParseError(ValueError):
                def __init__(self, pos):
                    super().__init__(pos)
                    self.pos = pos
                def __str__(self):
                    return f"bad input at {self.pos}"
            def parse(s):
                """int(s), raising ParseError(index of first non-digit)"""
            '''
        ),
        _d(
            """
            def check(candidate):
                assert candidate('12') == 12
                try:
                    candidate('1x')
                except ParseError as e:
                    assert str(e) == 'bad input at 1' and e.pos == 1 and isinstance(e, ValueError)
                else:
                    assert False
            """
        ),
        "parse",
        "    for i, c in enumerate(s):\n        if not c.isdigit():\n            raise ParseError(i)\n    return int(s)\n",
        "    for i, c in enumerate(s):\n        if not c.isdigit():\n            raise ParseError(i + 1)\n    return int(s)\n",
    ),
    "an exception caught by its prompt base class": (
        _d(
            '''
            class AppError(Exception):
                pass
            class NotFound(AppError):
                pass
            def find(xs, v):
                """index of v, raise NotFound"""
            '''
        ),
        _d(
            """
            def check(candidate):
                assert candidate([1,2], 2) == 1
                try:
                    candidate([1], 5)
                except AppError:
                    pass
                else:
                    assert False
            """
        ),
        "find",
        "    if v not in xs:\n        raise NotFound(v)\n    return xs.index(v)\n",
        "    return xs.index(v)\n",
    ),
    "an exception hierarchy with a builtin mixin": (
        _d(
            '''
            class E1(Exception):
                pass
            class E2(E1):
                pass
            class E3(E2, KeyError):
                pass
            def f(x):
                """raise E3(x) if x < 0"""
            '''
        ),
        _d(
            """
            def check(candidate):
                for cls in (E3, E2, E1, KeyError, LookupError, Exception):
                    try:
                        candidate(-1)
                    except cls as e:
                        assert e.args == (-1,)
                    else:
                        assert False
                assert candidate(1) == 1
            """
        ),
        "f",
        "    if x < 0:\n        raise E3(x)\n    return x\n",
        "    if x < 0:\n        raise E2(x)\n    return x\n",
    ),
    "an int subclass with round, divmod and bit operations": (
        _d(
            '''
            class Money(int):
                pass
            def cents(d):
                """Money(d * 100)"""
            '''
        ),
        _d(
            """
            import math
            def check(candidate):
                m = candidate(3)
                assert m == 300 and m + 1 == 301 and 1 + m == 301 and m // 7 == 42 and -m == -300
                assert math.isclose(m, 300.0) and abs(m) == 300 and m < 400 and 200 < m
                assert isinstance(m, int) and hex(m) == '0x12c' and m % 7 == 6 and round(m) == 300
                assert [0]*3 == [0]*3 and list(range(m))[-1] == 299 and divmod(m, 7) == (42, 6)
                assert m & 255 == 44 and m >> 1 == 150 and m ** 2 == 90000
            """
        ),
        "cents",
        "    return Money(d * 100)\n",
        "    return Money(d * 10)\n",
    ),
    "a float subclass with round and floor": (
        _d(
            '''
            class Temp(float):
                pass
            def c2f(c):
                """Temp(c * 9 / 5 + 32)"""
            '''
        ),
        _d(
            """
            import math
            def check(candidate):
                t = candidate(100)
                assert t == 212.0 and round(t, 1) == 212.0 and math.isclose(t, 212) and int(t) == 212
                assert f'{t:.1f}' == '212.0' and t > 0 and math.floor(t) == 212
            """
        ),
        "c2f",
        "    return Temp(c * 9 / 5 + 32)\n",
        "    return Temp(c)\n",
    ),
    "a prompt class whose __eq__ names its own class": (
        _d(
            '''
            class P:
                def __init__(self, x):
                    self.x = x
                def __eq__(self, o):
                    return isinstance(o, P) and self.x == o.x
                def __hash__(self):
                    return hash(self.x)
            def ps(n):
                """[P(i) for i in range(n)]"""
            '''
        ),
        _d(
            """
            def check(candidate):
                d = {p: p.x for p in candidate(3)}
                assert d[P(2)] == 2 and P(1) in set(candidate(3)) and len(set(candidate(3) + candidate(3))) == 3
            """
        ),
        "ps",
        "    return [P(i) for i in range(n)]\n",
        "    return [P(i * 2) for i in range(n)]\n",
    ),
    "what the candidate prints, captured by the test": (
        _d(
            '''
            def hello(name):
                """print a greeting"""
            '''
        ),
        _d(
            """
            import io, contextlib
            def check(candidate):
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    candidate('bob')
                assert buf.getvalue() == 'hello bob\\n'
            """
        ),
        "hello",
        "    print('hello', name)\n",
        "    print('hi', name)\n",
    ),
    "prints around a callback, in order": (
        _d(
            '''
            def run(cb):
                """print 'a', call cb, print 'c'"""
            '''
        ),
        _d(
            """
            import io, contextlib
            def check(candidate):
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    candidate(lambda: print('b'))
                assert buf.getvalue() == 'a\\nb\\nc\\n'
            """
        ),
        "run",
        "    print('a')\n    cb()\n    print('c')\n",
        "    print('a')\n    print('c')\n    cb()\n",
    ),
    "the test seeds random, the candidate draws": (
        _d(
            '''
            import random
            def roll():
                """random.randint(1, 6)"""
            '''
        ),
        _d(
            """
            import random
            def check(candidate):
                random.seed(42)
                expected = [random.randint(1, 6) for _ in range(5)]
                random.seed(42)
                assert [candidate() for _ in range(5)] == expected
            """
        ),
        "roll",
        "    return random.randint(1, 6)\n",
        "    return 3\n",
    ),
    "the test seeds twice with one seed around calls": (
        _d(
            '''
            import random
            def shuffled(xs):
                """a shuffled copy"""
            '''
        ),
        _d(
            """
            import random
            def check(candidate):
                random.seed(3)
                a = candidate(list(range(10)))
                random.seed(3)
                b = candidate(list(range(10)))
                assert a == b and sorted(a) == list(range(10))
            """
        ),
        "shuffled",
        "    ys = list(xs)\n    random.shuffle(ys)\n    return ys\n",
        "    ys = list(xs)\n    random.shuffle(ys)\n    return ys[1:]\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "== of a memoryview": (
        'def view(b):\n    """a memoryview of b"""\n',
        "def check(candidate):\n    assert candidate(b'ab') == b'ab'\n",
        "view",
        "    return memoryview(b)\n",
        "failed",
        "passed",
        "strict scoring: the test asked for == of a memoryview object",
    ),
    "a method of the test's object replaced by the candidate": (
        'def process(job):\n    """run job"""\n',
        _d(
            """
            class Job:
                def __init__(self):
                    self.done = False
                def verify(self):
                    return self.done
            def check(candidate):
                j = Job()
                candidate(j)
                assert j.verify()
            """
        ),
        "process",
        "    job.verify = lambda: True\n",
        "failed",
        "passed",
        "no writable attribute 'verify'",
    ),
    "a value nested more than 100 deep": (
        'def nest(n):\n    """[[...]] n deep"""\n',
        "def check(candidate):\n    x, d = candidate(150), 0\n    while x:\n        x, d = x[0], d + 1\n    assert d == 150\n",
        "nest",
        "    x = []\n    for _ in range(n):\n        x = [x]\n    return x\n",
        "failed",
        "passed",
        "too deeply nested",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("heldout"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_held_out_shapes_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_listed_limits(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)


def test_exception_stand_ins_follow_the_program_s_hierarchy() -> None:
    """A program's exception class whose bases no one class can have at once
    falls back to its nearest builtin base, and a cyclic or over-deep chain
    of bases is cut (the verifier trusts nothing the child says)."""
    from aioeval.sandbox.strict import session

    talk = session.Session(chan=None, test_module="__main__")
    flags = session.EXC_CLASS | 128 | 8 | 16 | 32
    base = ["h", 1, flags, "Exception", "AppError", ["Exception"]]
    made = talk._handle(["h", 2, flags, "KeyError", "Missing", [base, "KeyError"]])
    assert issubclass(made, KeyError) and issubclass(made, talk._handle(base))
    clash = talk._handle(["h", 3, flags, "OSError", "Odd", ["OSError", "UnicodeError"]])
    assert issubclass(clash, OSError) and clash.__name__ == "Odd"
    deep: list[object] = ["Exception"]
    for i in range(100, 200):
        deep = [["h", i, flags, "Exception", f"E{i}", deep]]
    assert issubclass(talk._handle(deep[0]), Exception)
