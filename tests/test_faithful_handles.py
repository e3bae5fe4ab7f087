"""Honest programs whose test uses the candidate's object, or lets the
candidate's code read the test's object, in a way only the live object
serves: the candidate's objects stay in its own process (the verifier
holds handles) and the test's objects in the verifier. Strict scoring
cannot judge these as the single program does; each is failed with a
reason that names the cause (listed in docs/strict-scoring.md), never a
bare ``TypeError`` or ``AttributeError`` of the handle."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_as_listed, score_both

from aioeval.sandbox.strict import handles
from aioeval.sandbox.values import described
from aioeval.types import CandidateResult

_DATACLASS = _d(
    '''
    from dataclasses import dataclass, asdict
    import copy

    @dataclass
    class Point:
        x: int
        y: int

    def shifted(p, d):
        """p moved by d on both axes"""
    '''
)
_SHIFTED = "    return Point(p.x + d, p.y + d)\n"
_GAVE = "strict scoring: the test gave the candidate's"

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "dataclasses.asdict of the candidate's dataclass": (
        _DATACLASS,
        "def check(candidate):\n    assert asdict(candidate(Point(1, 2), 3)) == {'x': 4, 'y': 5}\n",
        "shifted",
        _SHIFTED,
        "failed",
        "passed",
        _GAVE,
    ),
    "pickle of the candidate's object": (
        _DATACLASS,
        "import pickle\n\n\ndef check(candidate):\n"
        "    q = candidate(Point(1, 2), 1)\n    assert pickle.loads(pickle.dumps(q)) == Point(2, 3)\n",
        "shifted",
        _SHIFTED,
        "failed",
        "failed",  # one program's classes are not importable by their module's name either
        "strict scoring: the test pickled the candidate's",
    ),
    "async with on the candidate's object": (
        'class Session:\n    """async with Session() as s: s.open is True inside, False after"""\n',
        _d(
            """
            import asyncio
            def check(candidate):
                async def use():
                    s = candidate()
                    async with s as t:
                        assert t.open
                    return s.open
                assert asyncio.run(use()) is False
            """
        ),
        "Session",
        "    def __init__(self):\n        self.open = False\n\n"
        "    async def __aenter__(self):\n        self.open = True\n        return self\n\n"
        "    async def __aexit__(self, *exc):\n        self.open = False\n",
        "failed",
        "passed",
        "strict scoring: the test used one of the candidate's objects in a way Python asks",
    ),
    "the candidate reads a dunder of the test's function": (
        'def params(f):\n    """the names of function f\'s positional parameters"""\n',
        "def check(candidate):\n    def area(w=2, h=3):\n        return w * h\n    assert candidate(area) == ('w', 'h')\n",
        "params",
        "    return f.__code__.co_varnames[: f.__code__.co_argcount]\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code read '__code__' of the test's",
    ),
    "the candidate calls a method of a standard object the test passes": (
        'def count_rows(conn):\n    """the number of rows of table t in sqlite3 connection conn"""\n',
        _d(
            """
            import sqlite3
            def check(candidate):
                conn = sqlite3.connect(':memory:')
                conn.execute('create table t (a)')
                conn.executemany('insert into t values (?)', [(1,), (2,)])
                assert candidate(conn) == 2
            """
        ),
        "count_rows",
        "    return conn.execute('select count(*) from t').fetchone()[0]\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code read 'execute' of the test's Connection",
    ),
    "async for over the test's async generator, in the candidate's code": (
        'async def total(source):\n    """Sum the items of the async iterable source."""\n',
        _d(
            """
            import asyncio
            async def nums(n):
                for i in range(n):
                    await asyncio.sleep(0)
                    yield i
            def check(candidate):
                assert asyncio.run(candidate(nums(5))) == 10
            """
        ),
        "total",
        "    s = 0\n    async for x in source:\n        s += x\n    return s\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code used one of the test's objects in a way",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("handles"), {}, LIMITS)


@pytest.mark.parametrize("name", list(LIMITS))
def test_uses_only_a_live_object_serves_are_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)


def test_the_child_and_the_verifier_read_the_same_handle_flags() -> None:
    for name in ("ORDERS", "CONTAINS", "COROUTINE", "GENERATOR", "ASYNC_ITERABLE"):
        assert getattr(described, name) == getattr(handles, name), name
