"""Wrong answers built to pass strict scoring where one program fails them,
judged as the single program judges them or failed with the reason named:
threads that use up the verifier's stand-ins for the candidate's threads, a
recursion limit lowered so the sandbox's own calls run out of it, an
``IntEnum`` the program writes out as a plain ``Enum``, values the verifier
cannot rebuild, and an exception rebuilt as another class. ``LIMITS`` also
holds ``StopIteration`` from a call, which ends the test's ``map`` loop in
one program too: strict scoring fails it by name.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_DISPATCH = (
    "import threading\n\n\ndef dispatch(events, handler):\n"
    '    """Call handler(e) for each event in order, on the calling thread; return the count."""\n'
)
_ON_THE_CALLING_THREAD = _d(
    """
    import threading
    def check(candidate):
        main, seen = threading.get_ident(), []
        def handler(e):
            seen.append((e, threading.get_ident()))
        assert candidate(list(range(6)), handler) == 6
        assert [e for e, _ in seen] == list(range(6))
        assert all(t == main for _, t in seen), "a handler ran off the calling thread"
    """
)
_PARKED_THEN_WORKERS = (
    "    parked, go = threading.Barrier(41), threading.Event()\n"
    "    def park():\n        handler.__name__\n        parked.wait()\n        go.wait()\n"
    "    ts = [threading.Thread(target=park) for _ in range(40)]\n"
    "    for t in ts:\n        t.start()\n    parked.wait()\n"
    "    for e in events:\n"
    "        t = threading.Thread(target=handler, args=(e,))\n        t.start()\n        t.join()\n"
    "    go.set()\n    for t in ts:\n        t.join()\n    return len(events)\n"
)
_LEVEL = (
    "from enum import IntEnum\n\n\nclass Level(IntEnum):\n    LOW = 1\n    HIGH = 2\n\n\n"
    'def classify(x):\n    """Level.LOW below 10, else Level.HIGH."""\n'
)
_AGE = 'def parse_age(s):\n    """The non-negative integer in s; raise on bad input."""\n'

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a handler called on worker threads after forty threads were parked": (
        _DISPATCH,
        _ON_THE_CALLING_THREAD,
        "dispatch",
        "    for e in events:\n        handler(e)\n    return len(events)\n",
        _PARKED_THEN_WORKERS,
    ),
    "the prompt's IntEnum written out again as a plain Enum": (
        _LEVEL,
        _d(
            """
            def check(candidate):
                assert candidate(3) == 1 and candidate(30) == 2
                assert sum([candidate(3), candidate(30)]) == 3
            """
        ),
        "classify",
        "    return Level.LOW if x < 10 else Level.HIGH\n",
        "    return Level.LOW if x < 10 else Level.HIGH\n\n\n"
        "from enum import Enum\n\n\nclass Level(Enum):\n    LOW = 1\n    HIGH = 2\n",
    ),
    "a plain OSError whose args begin with an errno": (
        'def opened(path):\n    """open(path).read(); a missing file raises FileNotFoundError."""\n',
        _d(
            """
            def check(candidate):
                try:
                    candidate('/no/such/file')
                except FileNotFoundError:
                    pass
                else:
                    raise AssertionError('no FileNotFoundError')
            """
        ),
        "opened",
        "    return open(path).read()\n",
        "    e = OSError('gone')\n    e.args = (2, 'No such file or directory')\n    raise e\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, strict reason)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "StopIteration from the candidate's call, ending the test's map loop": (
        'def isqrt(n):\n    """The integer square root of n."""\n',
        _d(
            """
            def check(candidate):
                for got, want in zip(map(candidate, [1, 4, 10, 99]), [1, 2, 3, 9]):
                    assert got == want, (got, want)
            """
        ),
        "isqrt",
        "    raise StopIteration\n",
        "failed",
        "passed",
        "strict scoring: the candidate's call raised StopIteration",
    ),
    "a recursion limit lowered on bad input instead of raising": (
        _AGE,
        _d(
            """
            def check(candidate):
                assert candidate("42") == 42
                try:
                    candidate("-3")
                except Exception:
                    pass
                else:
                    raise AssertionError("no error for -3")
            """
        ),
        "parse_age",
        "    import sys\n    if s.isdigit():\n        return int(s)\n"
        "    for limit in range(5, 200):\n        try:\n"
        "            sys.setrecursionlimit(limit)\n            break\n"
        "        except RecursionError:\n            pass\n    return -1\n",
        "failed",
        "failed",
        "a reply past the recursion limit",
    ),
    "a zone the verifier cannot load in place of the error the test expects": (
        "from zoneinfo import ZoneInfo\n\n\ndef zone(name):\n"
        '    """ZoneInfo(name); an unknown name raises ZoneInfoNotFoundError."""\n',
        _d(
            """
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
            def check(candidate):
                assert candidate("Europe/Paris") == ZoneInfo("Europe/Paris")
                try:
                    candidate("Mars/Olympus")
                except ZoneInfoNotFoundError:
                    pass
                else:
                    raise AssertionError("no error")
            """
        ),
        "zone",
        "    try:\n        return ZoneInfo(name)\n    except Exception:\n"
        "        with open('/usr/share/zoneinfo/UTC', 'rb') as f:\n"
        "            return ZoneInfo.from_file(f, key=name + '\\x00')\n",
        "failed",
        "failed",
        "the candidate sent back malformed",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("wrong_passes"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_wrong_answers_built_to_pass_are_judged_as_one_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_where_one_program_cannot_be_followed_the_wrong_answer_fails_by_name(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
