"""What one program shares between the test and the candidate's code and
two processes hold apart, judged as the single program judges it or named:
the candidate's coroutines the test runs side by side (run side by side
in the child too, so a lost update shows), and the candidate's threads
calling the test's function at once while it waits. ``LIMITS`` are the answers strict scoring cannot
judge as one program does: the result names why, so a wrong answer never
passes silently.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_TALLY = (
    "import asyncio\n\n\nclass Tally:\n"
    '    """await add(key, n) adds n under key (it yields to the loop once while it'
    ' records); total(key) -> the sum."""\n'
)
_TALLY_RIGHT = (
    "    def __init__(self):\n        self.sums = {}\n"
    "    async def add(self, key, n):\n        await asyncio.sleep(0)\n"
    "        self.sums[key] = self.sums.get(key, 0) + n\n"
    "    def total(self, key):\n        return self.sums.get(key, 0)\n"
)
_TALLY_LOST_UPDATE = (
    "    def __init__(self):\n        self.sums = {}\n"
    "    async def add(self, key, n):\n        seen = self.sums.get(key, 0)\n"
    "        await asyncio.sleep(0)\n        self.sums[key] = seen + n\n"
    "    def total(self, key):\n        return self.sums.get(key, 0)\n"
)
_SAFE_DIV = (
    "import asyncio\n\n\nasync def safe_div(a, b):\n"
    '    """a / b after one yield to the loop; ValueError when b is 0."""\n'
)
_PARALLEL_MAP = (
    "from concurrent.futures import ThreadPoolExecutor\n\n\ndef parallel_map(func, items):\n"
    '    """[func(x) for x in items], computed on a pool of 4 threads, in input order."""\n'
)
_SLOW_FIRST = _d(
    """
    import time
    def check(candidate):
        def slow_first(x):
            if x == 0:
                time.sleep(0.3)
            return x * 10
        assert candidate(slow_first, [0, 1, 2, 3]) == [0, 10, 20, 30]
    """
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "the candidate's coroutines the test gathers in its own coroutine": (
        _TALLY,
        _d(
            """
            import asyncio
            def check(candidate):
                t = candidate()
                async def main():
                    await asyncio.gather(*[t.add('a', 1) for _ in range(30)], t.add('b', 5))
                    await t.add('a', 2)
                asyncio.run(main())
                assert t.total('a') == 32, t.total('a')
                assert t.total('b') == 5
            """
        ),
        "Tally",
        _TALLY_RIGHT,
        _TALLY_LOST_UPDATE,
    ),
    "the candidate's coroutines gathered in an IsolatedAsyncioTestCase": (
        _TALLY,
        _d(
            """
            import asyncio
            import unittest
            class T(unittest.IsolatedAsyncioTestCase):
                async def test_gathered(self):
                    t = Tally()
                    await asyncio.gather(*[t.add('x', 2) for _ in range(10)])
                    self.assertEqual(t.total('x'), 20)
            def check(candidate):
                r = unittest.TextTestRunner(verbosity=0).run(unittest.defaultTestLoader.loadTestsFromTestCase(T))
                assert r.wasSuccessful()
            """
        ),
        "Tally",
        _TALLY_RIGHT,
        _TALLY_LOST_UPDATE,
    ),
    "gathered coroutines of the candidate's that raise": (
        _SAFE_DIV,
        _d(
            """
            import asyncio
            def check(candidate):
                async def main():
                    return await asyncio.gather(candidate(6, 3), candidate(1, 0), candidate(9, 3),
                                                return_exceptions=True)
                got = asyncio.run(main())
                assert got[0] == 2 and got[2] == 3, got
                assert isinstance(got[1], ValueError), got
                try:
                    asyncio.run(candidate(1, 0))
                except ValueError:
                    pass
                else:
                    raise AssertionError
            """
        ),
        "safe_div",
        "    await asyncio.sleep(0)\n    if b == 0:\n        raise ValueError('b is 0')\n    return a / b\n",
        "    await asyncio.sleep(0)\n    if b == 0:\n        raise ZeroDivisionError('b is 0')\n"
        "    return a / b\n",
    ),
    "a clock the test patches with exactly the readings the answer takes": (
        "import time\n\n\ndef elapsed(fn):\n"
        '    """Seconds fn() took by two readings of time.perf_counter()."""\n',
        _d(
            """
            from unittest import mock
            def check(candidate):
                with mock.patch('time.perf_counter', side_effect=[10.0, 12.5]):
                    assert candidate(lambda: None) == 2.5
            """
        ),
        "elapsed",
        "    t0 = time.perf_counter()\n    fn()\n    return time.perf_counter() - t0\n",
        "    t0 = time.perf_counter()\n    fn()\n    return t0 - time.perf_counter()\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, strict reason)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "the candidate's threads calling the test's function at once": (
        _PARALLEL_MAP,
        _SLOW_FIRST,
        "parallel_map",
        "    with ThreadPoolExecutor(4) as pool:\n        return list(pool.map(func, items))\n",
        "failed",
        "passed",
        "strict scoring: the candidate's threads called the test's code side by side",
    ),
    "a wrong answer whose threads return in completion order": (
        _PARALLEL_MAP,
        _SLOW_FIRST,
        "parallel_map",
        "    from concurrent.futures import as_completed\n"
        "    with ThreadPoolExecutor(4) as pool:\n"
        "        return [f.result() for f in as_completed([pool.submit(func, x) for x in items])]\n",
        "failed",
        "failed",
        "strict scoring: the candidate's threads called the test's code side by side",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("shared"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_what_one_program_shares_is_judged_as_it_judges(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_where_it_cannot_be_shared_the_reason_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
