"""Operators on the objects the test and the candidate share, judged as
the single program judges them: arithmetic on instances of a class the
prompt declares and the completion completes (``a + b``, ``v * 2``,
``3 * v``, ``abs(v)``, ``a @ b``, ``v += w``: the candidate's own
computation, whose result the test then judges), values of a ``Flag`` the
prompt defines that the test builds and the candidate combines, and
``unittest.mock.patch.object`` on the candidate's class (a handle is no
awaitable, so the patch is a plain ``MagicMock``).

``LIMITS``: where the test then asks ``==`` of two of the candidate's
objects, which only the candidate's code could answer, the check fails
with that reason (docs/strict-scoring.md), not with a ``TypeError``."""

from __future__ import annotations

import pytest
from test_faithful import _body, _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_VECTOR = _d(
    '''
    class Vec:
        """A 2-D vector with x and y: +, -, * and @ (dot product) with another Vec,
        * by a number on either side, abs() its length, += in place."""
    '''
)
_VECTOR_RIGHT = _body(
    """
        def __init__(self, x, y):
            self.x, self.y = x, y
        def __add__(self, o):
            return Vec(self.x + o.x, self.y + o.y)
        def __iadd__(self, o):
            self.x += o.x
            self.y += o.y
            return self
        def __sub__(self, o):
            return Vec(self.x - o.x, self.y - o.y)
        def __mul__(self, k):
            return Vec(self.x * k, self.y * k)
        __rmul__ = __mul__
        def __matmul__(self, o):
            return self.x * o.x + self.y * o.y
        def __abs__(self):
            return (self.x ** 2 + self.y ** 2) ** 0.5
        def __neg__(self):
            return Vec(-self.x, -self.y)
    """
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "arithmetic on instances of a class the completion completes": (
        _VECTOR,
        _d(
            """
            def check(candidate):
                a, b = candidate(1, 2), candidate(3, 4)
                c = a + b
                assert (c.x, c.y) == (4, 6) and (a.x, a.y) == (1, 2)
                assert ((b - a).x, (b - a).y) == (2, 2)
                assert (a * 3).y == 6 and (3 * a).x == 3
                assert a @ b == 11 and abs(b) == 5.0 and (-a).x == -1
                keep = a
                a += b
                assert a is keep and (keep.x, keep.y) == (4, 6)
            """
        ),
        "Vec",
        _VECTOR_RIGHT,
        _VECTOR_RIGHT.replace(
            "return Vec(self.x + o.x, self.y + o.y)", "return Vec(self.x + o.x, self.y)"
        ),
    ),
    "values of the prompt's Flag the test builds, combined by the candidate": (
        _d(
            '''
            from enum import Flag, auto

            class Perm(Flag):
                READ = auto()
                WRITE = auto()
                DELETE = auto()

            def effective(roles, grants, denied):
                """The union of grants[r] for the known roles r, without denied."""
            '''
        ),
        _d(
            """
            def check(candidate):
                grants = {'viewer': Perm.READ, 'editor': Perm.READ | Perm.WRITE}
                assert candidate(['viewer', 'editor'], grants, Perm.DELETE) == Perm.READ | Perm.WRITE
                assert candidate(['editor', 'ghost'], grants, Perm.WRITE) is Perm.READ
                assert candidate([], grants, Perm(0)) == Perm(0)
            """
        ),
        "effective",
        _body(
            """
                p = Perm(0)
                for r in roles:
                    p |= grants.get(r, Perm(0))
                return p & ~denied
            """
        ),
        _body(
            """
                p = Perm(0)
                for r in roles:
                    p |= grants.get(r, Perm(0))
                return p
            """
        ),
    ),
    "mock.patch.object on the candidate's class, inside subTest": (
        _d(
            '''
            class Rates:
                def base(self, region):
                    raise RuntimeError("calls a service")

                def quote(self, region, kg):
                    """base(region) per started kg, at least one."""
            '''
        ),
        _d(
            """
            import unittest
            from unittest import mock
            def check(candidate):
                class T(unittest.TestCase):
                    def test_quote(self):
                        with mock.patch.object(candidate, "base", return_value=110) as base:
                            for kg, want in [(0.2, 110), (1.5, 220)]:
                                with self.subTest(kg=kg):
                                    self.assertEqual(candidate().quote("EU", kg), want)
                            base.assert_called_with("EU")
                r = unittest.TextTestRunner(verbosity=0).run(
                    unittest.defaultTestLoader.loadTestsFromTestCase(T))
                assert r.wasSuccessful(), r.failures + r.errors
            """
        ),
        "Rates",
        "        import math\n        return self.base(region) * max(1, math.ceil(kg))\n",
        "        return self.base(region) * max(1, int(kg))\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "== of a sum of two of the candidate's objects": (
        _d(
            '''
            class Money:
                """amount and currency; == and + for the same currency."""
                def __init__(self, amount, currency):
                    self.amount, self.currency = amount, currency
            '''
        ),
        "def check(candidate):\n    assert candidate(1, 'EUR') + candidate(2, 'EUR') == candidate(3, 'EUR')\n",
        "Money",
        _body(
            """
                def __eq__(self, o):
                    return (self.amount, self.currency) == (o.amount, o.currency)
                def __add__(self, o):
                    return Money(self.amount + o.amount, self.currency)
            """
        ),
        "failed",
        "passed",
        "strict scoring: the test asked for == of a Money object",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("operators"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_operators_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_operators_limits_carry_their_reason(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)


def test_the_child_runs_each_operator_a_handle_asks_for() -> None:
    """Each operator and conversion a handle forwards has the child's
    function of that name; both operand orders; a malformed request is
    refused."""
    from fractions import Fraction

    from aioeval.sandbox.values import arith

    for dunder, fn in (*((n, n) for n in arith.BINARY), *arith.BITWISE):
        assert fn in arith.COMPUTED and f"i{dunder}" in arith.COMPUTED
    for name in (*arith.UNARY, *arith.CONVERSIONS):
        assert name in arith.COMPUTED
    half = Fraction(1, 2)
    assert arith.compute(half, ["sub", 1, False]) == Fraction(-1, 2)
    assert arith.compute(half, ["sub", 1, True]) == Fraction(1, 2)
    assert arith.compute(half, ["round", 0]) == 0 and arith.compute(half, ["neg"]) == -half
    for bad in (["system", 1, False], "add", ["add", 1, False, 2]):
        with pytest.raises(TypeError):
            arith.compute(half, bad)
