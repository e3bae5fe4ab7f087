"""What strict scoring cannot follow fails the check whatever the test does
after: a refusal, a value that does not cross, output past what is passed
on, a measure of the verifier's own process, a write the shared directory's
guard refused. A test that catches the error
(``except Exception``, a bare ``except``, ``assertRaises``) would otherwise
take strict scoring's limit for the candidate's answer, and a wrong answer
would pass. A class is known by what it is, not by what its metaclass or
its name claims, and the candidate's log records reach the test whatever
it does to its own loggers. Each limit is a wrong answer the single
program fails."""

from __future__ import annotations

import textwrap

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_CAUGHT = _d(
    """
    def check(candidate):
        try:
            candidate(-1)
        except Exception:
            return
        raise AssertionError("expected an error")
    """
)

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "a refusal inside a bare except": (
        'class Account:\n    def __init__(self, n):\n        self.n = n\n\n\ndef make(n):\n    """an Account"""\n',
        _d(
            """
            def check(candidate):
                a = candidate(1)
                try:
                    hash(a)
                except:
                    return
                raise AssertionError("an Account must not be hashable")
            """
        ),
        "make",
        "    class Account:\n        def __init__(self, n):\n            self.n = n\n"
        "        def __hash__(self):\n            return self.n\n    return Account(n)\n",
        "failed",
        "failed",
        "strict scoring: the test asked for hash()",
    ),
    "a value too deep to cross, caught as the error expected": (
        'def nest(n):\n    """n levels of lists; ValueError if n < 0"""\n',
        _CAUGHT,
        "nest",
        "    v = []\n    for _ in range(abs(n) * 500):\n        v = [v]\n    return v\n",
        "failed",
        "failed",
        "the candidate sent back value too large or too deeply nested",
    ),
    "output past what is passed on hides a forbidden line": (
        'def quiet(n):\n    """return n; print nothing"""\n',
        _d(
            """
            import contextlib, io
            def check(candidate):
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    assert candidate(3) == 3
                assert "debug" not in buf.getvalue()
            """
        ),
        "quiet",
        "    import sys\n    sys.stderr.write('x' * 1_200_000)\n    print('debug')\n    return n\n",
        "failed",
        "failed",
        "strict scoring passes on at most",
    ),
    "a CPU budget measured in the test's own process": (
        'def total(n):\n    """sum of range(n), fast"""\n',
        _d(
            """
            import time
            def check(candidate):
                t0 = time.process_time()
                assert candidate(3000) == sum(range(3000))
                assert time.process_time() - t0 < 0.02
            """
        ),
        "total",
        "    s = 0\n    for i in range(n):\n        for _ in range(n // 3):\n            pass\n"
        "        s += i\n    return s\n",
        "failed",
        "failed",
        "strict scoring: the test measured the CPU time of its own process",
    ),
}

_FAKED_BASES = textwrap.indent(
    _d(
        """
        class Meta(type):
            @property
            def __bases__(cls):
                return (ValueError,)
            @property
            def __mro__(cls):
                return (cls, ValueError, Exception, BaseException, object)
        class AgeError(Exception, metaclass=Meta):
            pass
        if int(s) < 0:
            raise AgeError("negative")
        return int(s)
    """
    ),
    "    ",
)
_RENAMED = textwrap.indent(
    _d(
        """
        from dataclasses import dataclass
        @dataclass
        class P:
            x: int
            y: int
        P.__name__ = P.__qualname__ = "Point"
        return P((a.x + b.x) // 2, (a.y + b.y) // 2)
    """
    ),
    "    ",
)

# name: (prompt, test, entry, wrong answer, strict status, official status, reason in strict)
FORGED: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "an exception class whose metaclass claims ValueError for a base": (
        'def parse_age(s):\n    """an int; ValueError if negative"""\n',
        _CAUGHT.replace("except Exception", "except ValueError"),
        "parse_age",
        _FAKED_BASES,
        "failed",
        "failed",
        "negative",
    ),
    "the candidate stops its logger's propagation before a forbidden error": (
        'def safe_div(a, b):\n    """a / b, or None when b == 0, logging nothing at ERROR"""\n',
        _d(
            """
            import unittest
            def check(candidate):
                case = unittest.TestCase()
                with case.assertNoLogs("app", level="ERROR"):
                    assert candidate(1, 0) is None
            """
        ),
        "safe_div",
        "    import logging\n    if b == 0:\n        logging.getLogger('app').propagate = False\n"
        "        logging.getLogger('app').error('division by zero')\n        return None\n"
        "    return a / b\n",
        "failed",
        "failed",
        "AssertionError",
    ),
    "a thread left running, counted in the test's own process": (
        'def compute(x):\n    """x * 2, leaving no thread running"""\n',
        _d(
            """
            import threading
            def check(candidate):
                before = threading.active_count()
                assert candidate(21) == 42
                assert threading.active_count() == before
            """
        ),
        "compute",
        "    import threading, time\n"
        "    threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "    return x * 2\n",
        "failed",
        "failed",
        "strict scoring: the test measured the threads running",
    ),
    "the test and the candidate calling each other 300 deep": (
        'def fact(n, step):\n    """n * step(n - 1), 1 for n == 0"""\n',
        _d(
            """
            import math
            def check(candidate):
                def step(k):
                    return 1 if k == 0 else candidate(k, step)
                assert candidate(300, step) == math.factorial(300)
            """
        ),
        "fact",
        "    return 1 if n == 0 else n * step(n - 1)\n",
        "failed",
        "passed",
        "strict scoring: the test's code and the candidate's called each other so deep",
    ),
    "a slow coroutine under the test's asyncio.wait_for": (
        'async def fetch(x):\n    """x, within 0.2 s"""\n',
        _d(
            """
            import asyncio
            def check(candidate):
                async def main():
                    try:
                        await asyncio.wait_for(candidate(1), 0.2)
                    except asyncio.TimeoutError:
                        return "late"
                    return "in time"
                assert asyncio.run(main()) == "in time"
            """
        ),
        "fetch",
        "    import asyncio\n    await asyncio.sleep(0.6)\n    return x\n",
        "failed",
        "failed",
        "strict scoring: a timer of the test's event loop fell due",
    ),
    "the candidate's TZ without a tzset": (
        'def local_hour(ts):\n    """the hour of ts in the local time zone"""\n',
        "import time\n\n\ndef check(candidate):\n"
        "    assert candidate(1700000000) == time.localtime(1700000000).tm_hour\n",
        "local_hour",
        "    import os, time\n    os.environ['TZ'] = 'Asia/Tokyo'\n"
        "    return time.gmtime(ts + 9 * 3600).tm_hour\n",
        "failed",
        "failed",
        "AssertionError",
    ),
    "a generator where the test wants a list": (
        'def evens(xs):\n    """the even items, as a list (not a generator)"""\n',
        _d(
            """
            import types
            def check(candidate):
                got = candidate([1, 2, 3, 4])
                assert not isinstance(got, types.GeneratorType), "must be eager"
                assert list(got) == [2, 4]
            """
        ),
        "evens",
        "    return (x for x in xs if x % 2 == 0)\n",
        "failed",
        "failed",
        "must be eager",
    ),
    "the guard's refusal taken for a read-only file": (
        'def write_readonly(path, text):\n    """write text to path, then make it read-only"""\n',
        _d(
            """
            def check(candidate):
                candidate("config.ini", "x = 1")
                try:
                    with open("config.ini", "w") as f:
                        f.write("tampered")
                except PermissionError:
                    return
                raise AssertionError("still writable")
            """
        ),
        "write_readonly",
        "    with open(path, 'w') as f:\n        f.write(text)\n",
        "failed",
        "failed",
        "strict scoring: the test may not write where the candidate could rewrite it",
    ),
    "a local class renamed after the prompt's": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Point:\n    x: int\n"
        '    y: int\n\n\ndef midpoint(a, b):\n    """the Point halfway"""\n',
        "def check(candidate):\n    assert candidate(Point(0, 0), Point(4, 6)) == Point(2, 3)\n",
        "midpoint",
        _RENAMED,
        "failed",
        "failed",
        "a class of the same name",
    ),
}

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "copy.deepcopy of the candidate's object, made by its own class": (
        'class Bag:\n    def __init__(self):\n        self.items = []\n\n\ndef filled(xs):\n    """a Bag"""\n',
        _d(
            """
            import copy
            def check(candidate):
                b = candidate([1, 2])
                c = copy.deepcopy(b)
                c.items.append(3)
                assert b.items == [1, 2] and c.items == [1, 2, 3]
            """
        ),
        "filled",
        "    class Bag:\n        def __init__(self, items):\n            self.items = list(items)\n"
        "    return Bag(xs)\n",
        "    class Bag:\n        def __init__(self, items):\n            self.items = list(items)\n"
        "        def __deepcopy__(self, memo):\n            return self\n    return Bag(xs)\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("sticky"), SHAPES, LIMITS | FORGED)


@pytest.mark.parametrize("name", list(LIMITS))
def test_a_limit_fails_the_check_whatever_the_test_does_after(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_copies_of_the_candidates_object_are_made_by_its_code(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(FORGED))
def test_what_a_wrong_answer_hides_behind_still_fails_it(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, FORGED)
