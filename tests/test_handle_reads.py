"""A value the candidate returns is read once, while its call is timed, and
kept until the candidate's code may run again: a child that answers each
read of a builtin subclass (or each ``float()`` of its own object)
differently, or does its work only when the test reads the value, gets
nothing for it, and an operator of a class the problem does not define
does not decide the test's tolerance check (red-team findings, kept as
tests)."""

from __future__ import annotations

import anyio

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Checked, Limits

# The child's reply to each read of a builtin subclass's value, replaced by
# the candidate's own function (its own process is its to patch).
PATCH = """
import sys
def _patch(fn):
    for m in list(sys.modules.values()):
        if hasattr(m, "as_base") and hasattr(m, "exception_tree"):
            m.as_base = fn
"""

VARYING_ROOT = (
    PATCH
    + """
class F(float):
    pass
_reads = [0]
def _answer(v):
    _reads[0] += 1
    return 0.5 if _reads[0] == 2 else 0.0   # a root only where poly reads x itself
_patch(_answer)
def find_zero(xs):
    return F(12345.0)
"""
)

ROOT_TEST = """
import math
def poly(xs, x):
    return sum(c * math.pow(x, i) for i, c in enumerate(xs))
def check(find_zero):
    x = find_zero([-1, 2])
    assert abs(poly([-1, 2], x)) < 1e-6
"""

LAZY_WORK = (
    PATCH
    + """
import time
class L(list):
    pass
def _slow(v):
    t = time.process_time()
    while time.process_time() - t < 3.0:
        pass
    return list(list.__iter__(v))
_patch(_slow)
def f(xs):
    return L(sorted(xs))
"""
)

TIMED_TEST = """
def check(f):
    out = __aioeval_within__(1.0, f, [3, 1, 2])
    assert out == [1, 2, 3]
"""

HONEST = """
import collections
class Bag(list):
    pass
def count(s):
    return collections.Counter(s)
def bag():
    return Bag([1, 2])
"""

HONEST_TEST = """
def check(count):
    c = count("abca")
    assert c == {"a": 2, "b": 1, "c": 1} and c["a"] == 2 and len(c) == 3
    b = bag()
    assert b == [1, 2]
    b.append(3)          # the candidate's code runs: the value is read again
    assert b == [1, 2, 3] and b[2] == 3
"""


# A "root" that is a root whenever the test evaluates the polynomial at
# it: its ``float()`` answers 0, then -xs[0]/xs[1], then 0, counted apart
# for the prompt's own ``poly`` (which the program's copy must match) and
# for the verifier's reads.
FRAME_ROOT = """
import sys
class Root:
    def __init__(self, xs):
        self.xs, self.n = xs, {}
    def __float__(self):
        here = sys._getframe(1).f_code.co_name
        i = self.n.get(here, 0)
        self.n[here] = i + 1
        return -self.xs[0] / self.xs[1] if i == 1 else 0.0
def find_zero(xs):
    return Root(xs)
"""

POLY = """
import math
def poly(xs, x):
    return sum([c * math.pow(x, i) for i, c in enumerate(xs)])
"""

POLY_TEST = """
def check(find_zero):
    for xs in ([-6, 11, -6, 1], [1, 2, 3, -4]):
        assert abs(poly(xs, find_zero(xs))) < 1e-4
"""

# An answer whose subtraction says it is within any tolerance.
ZERO_DIFF = """
class Zero:
    def __sub__(self, other):
        return 0.0
    def __rsub__(self, other):
        return 0.0
def mad(xs):
    return Zero()
"""

MAD_TEST = """
def check(mad):
    assert abs(mad([1.0, 2.0, 3.0]) - 2.0 / 3.0) < 1e-6
"""

# An honest object with a number of its own that changes with its method.
HONEST_NUMBER = """
class Estimate:
    def __init__(self):
        self.v = 1.0
    def refine(self):
        self.v = 2.0
    def __float__(self):
        return self.v
def estimate():
    return Estimate()
"""

NUMBER_TEST = """
import math
def check(estimate):
    e = estimate()
    assert float(e) == 1.0 and math.pow(e, 2) == 1.0
    e.refine()
    assert float(e) == 2.0 and math.pow(e, 2) == 4.0
"""


def check_strict(program: str, setup: str, entry: str, prelude: str = "") -> tuple[str, str]:
    """(status, reason) of one strict check: ``check(entry)`` after
    `setup` (and the prompt `prelude`) in the verifier, `program` in a child."""

    async def go() -> tuple[str, str]:
        async with LocalPool(workers=1, limits=Limits(cpu_s=6.0, wall_s=30.0)) as pool:
            task = Checked(
                program=program, entry=entry, setup=setup, driver=f"check({entry})", prelude=prelude
            )
            out = await pool.execute(task)
        return out.status, out.reason

    return anyio.run(go)


def test_a_value_that_changes_between_reads_is_read_once() -> None:
    status, reason = check_strict(VARYING_ROOT, ROOT_TEST, "find_zero")
    assert status == "failed", reason


def test_work_put_off_until_the_value_is_read_counts_in_the_call() -> None:
    status, reason = check_strict(LAZY_WORK, TIMED_TEST, "f")
    assert status == "timeout" and "time limit of 1s" in reason, reason


def test_honest_subclass_values_compare_and_follow_their_own_changes() -> None:
    status, reason = check_strict(HONEST, HONEST_TEST, "count")
    assert status == "passed", reason


def test_a_number_that_changes_between_conversions_is_read_once() -> None:
    status, reason = check_strict(FRAME_ROOT, POLY_TEST, "find_zero", POLY)
    assert status == "failed", reason


def test_an_operator_of_a_class_the_problem_does_not_define_is_refused() -> None:
    status, reason = check_strict(ZERO_DIFF, MAD_TEST, "mad")
    assert status == "failed" and "__sub__, an operator of a class" in reason, reason


def test_an_honest_number_follows_its_own_changes() -> None:
    status, reason = check_strict(HONEST_NUMBER, NUMBER_TEST, "estimate")
    assert status == "passed", reason
