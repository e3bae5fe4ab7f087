"""``SystemExit`` the candidate's code raises, judged as the single program
judges it: a test's ``except SystemExit`` and ``assertRaises(SystemExit)``
catch it (its ``code`` as the candidate gave it), and one no clause of the
test's catches fails the check, whatever its code (``LIMITS``: in strict
scoring ``sys.exit(0)`` is never a pass, nor is a ``unittest.SkipTest``).

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_RUN = 'def run(args):\n    """sys.exit(2) when args is empty, else return len(args)."""\n'
_CLI = (
    "import argparse\n\n\ndef main(argv):\n"
    '    """prog N: return N * 2; argparse exits with status 2 on a missing or bad N."""\n'
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a SystemExit the candidate raises, caught by the test's except": (
        _RUN,
        _d(
            """
            def check(candidate):
                assert candidate([1]) == 1
                try:
                    candidate([])
                except SystemExit as e:
                    assert e.code == 2, e.code
                else:
                    assert False
            """
        ),
        "run",
        "    import sys\n    if not args:\n        sys.exit(2)\n    return len(args)\n",
        "    import sys\n    if not args:\n        sys.exit(1)\n    return len(args)\n",
    ),
    "argparse's exit, caught by a unittest assertRaises": (
        _CLI,
        _d(
            """
            import contextlib, io, unittest
            class T(unittest.TestCase):
                def test_errors(self):
                    self.assertEqual(main(['4']), 8)
                    for argv in [[], ['x']]:
                        with self.subTest(argv=argv):
                            with contextlib.redirect_stderr(io.StringIO()):
                                with self.assertRaises(SystemExit) as cm:
                                    main(argv)
                            self.assertEqual(cm.exception.code, 2)
            def check(candidate):
                res = unittest.TextTestRunner(stream=io.StringIO()).run(
                    unittest.defaultTestLoader.loadTestsFromTestCase(T))
                assert res.wasSuccessful(), res.failures + res.errors
            """
        ),
        "main",
        "    p = argparse.ArgumentParser(prog='prog')\n    p.add_argument('n', type=int)\n"
        "    return p.parse_args(argv).n * 2\n",
        "    p = argparse.ArgumentParser(prog='prog')\n    p.add_argument('n', nargs='?', default='0')\n"
        "    return int(p.parse_args(argv).n) * 2\n",
    ),
    "a SystemExit the test's except Exception does not catch": (
        _RUN,
        _d(
            """
            def check(candidate):
                try:
                    r = candidate([])
                except Exception:
                    r = 0
                assert r == 0
            """
        ),
        "run",
        "    if not args:\n        raise ValueError('empty')\n    return len(args)\n",
        "    import sys\n    if not args:\n        sys.exit(0)\n    return len(args)\n",
    ),
    "the program's own SystemExit class, caught by the test": (
        _RUN,
        _d(
            """
            def check(candidate):
                try:
                    candidate([])
                except SystemExit as e:
                    assert e.code == 2 and type(e).__name__ == 'Usage', (e.code, type(e))
                else:
                    assert False
            """
        ),
        "run",
        "    if not args:\n        raise Usage(2)\n    return len(args)\n\n\n"
        "class Usage(SystemExit):\n    pass\n",
        "    if not args:\n        raise SystemExit(2)\n    return len(args)\n",
    ),
}

_SUITE = _d(
    """
    import io, unittest
    class T(unittest.TestCase):
        def test_counts(self):
            self.assertEqual(run([1, 2]), 2)
    def check(candidate):
        res = unittest.TextTestRunner(stream=io.StringIO()).run(
            unittest.defaultTestLoader.loadTestsFromTestCase(T))
        assert res.wasSuccessful(), res.failures + res.errors
    """
)
"""A suite a company writes: a skipped method (or one unittest's own stop
signal ends) counts as a success, in one program too, so the candidate's
code that raises them would pass it without computing anything."""

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "sys.exit(0) that no clause of the test's catches": (
        _RUN,
        "def check(candidate):\n    assert candidate([]) == 5\n",
        "run",
        "    import sys\n    sys.exit(0)\n",
        "failed",
        "failed",
        "SystemExit: 0",
    ),
    "unittest.SkipTest the candidate raises, in a suite the test runs": (
        _RUN,
        _SUITE,
        "run",
        "    import unittest\n    raise unittest.SkipTest('later')\n",
        "failed",
        "passed",
        "the candidate raised SkipTest, which would skip the test's checks",
    ),
    "unittest's own stop signal the candidate raises": (
        _RUN,
        _SUITE,
        "run",
        "    import unittest.case\n    raise unittest.case._ShouldStop()\n",
        "failed",
        "passed",
        "the candidate raised _ShouldStop, which would skip the test's checks",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("exits"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_exits_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_an_exit_no_clause_catches_fails(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
