"""Where what the candidate's code logs or prints cannot reach the test as
in one program, the failed check says so: a logger the candidate's code
gives a handler of its own in its process, however it does (the test's
logger of that name has none), and output past the check's budget, which
is dropped. What does reach it (``SHAPES``) is judged alike: a record's
``extra=`` attributes that the test's handler reads, and its exception.

Each case is a problem with one honest answer, scored in one strict and
one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a record's extra= attributes, read by the test's own handler": (
        "import logging\n\n\ndef charge(order_id, cents):\n"
        '    """Log "charged" at INFO on the "shop.pay" logger with extra fields'
        ' order_id and cents; refuse (log "refused" at ERROR, same fields) when'
        ' cents <= 0. Returns cents > 0."""\n',
        _d(
            """
            import logging
            class Keep(logging.Handler):
                def __init__(self):
                    super().__init__()
                    self.seen = []
                def emit(self, record):
                    self.seen.append((record.levelname, record.getMessage(),
                                      record.order_id, record.cents))
            def check(candidate):
                keep = Keep()
                shop = logging.getLogger("shop")
                shop.addHandler(keep)
                shop.setLevel(logging.DEBUG)
                try:
                    assert candidate("A1", 250) is True
                    assert candidate("A2", 0) is False
                finally:
                    shop.removeHandler(keep)
                assert keep.seen == [("INFO", "charged", "A1", 250),
                                     ("ERROR", "refused", "A2", 0)], keep.seen
            """
        ),
        "charge",
        "    log = logging.getLogger('shop.pay')\n    ok = cents > 0\n"
        "    (log.info if ok else log.error)('charged' if ok else 'refused',"
        " extra={'order_id': order_id, 'cents': cents})\n    return ok\n",
        "    log = logging.getLogger('shop.pay')\n    ok = cents > 0\n"
        "    (log.info if ok else log.error)('charged' if ok else 'refused',"
        " extra={'order_id': order_id, 'cents': abs(cents)})\n    return cents >= 0\n",
    ),
}

SHAPES["a record's exception, read by assertLogs as exc_info"] = (
    "import logging\n\n\ndef safe_div(a, b):\n"
    '    """a / b; on an error log it with logger "calc".exception("div failed")'
    ' and return None."""\n',
    _d(
        """
        import unittest
        def check(candidate):
            class T(unittest.TestCase):
                def test_logged(self):
                    with self.assertLogs("calc", level="ERROR") as cm:
                        self.assertIsNone(candidate(1, 0))
                    self.assertIs(cm.records[0].exc_info[0], ZeroDivisionError)
                    self.assertIn("Traceback", cm.output[0])
            res = unittest.TestResult()
            unittest.defaultTestLoader.loadTestsFromTestCase(T).run(res)
            assert res.wasSuccessful() and candidate(6, 3) == 2, res.failures + res.errors
        """
    ),
    "safe_div",
    "    try:\n        return a / b\n    except ZeroDivisionError:\n"
    "        logging.getLogger('calc').exception('div failed')\n",
    "    try:\n        return a / b\n    except ZeroDivisionError:\n"
    "        logging.getLogger('calc').error('div failed')\n",
)

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "a logger the candidate configures, which the test then logs to": (
        "import logging\n\n\ndef configure(stream):\n"
        '    """The logger "audit", writing "LEVEL|message" lines to stream."""\n',
        _d(
            """
            import io, logging
            def check(candidate):
                s = io.StringIO()
                candidate(s)
                logging.getLogger('audit').warning('late')
                assert s.getvalue() == 'WARNING|late\\n', repr(s.getvalue())
            """
        ),
        "configure",
        "    lg = logging.getLogger('audit')\n    h = logging.StreamHandler(stream)\n"
        "    h.setFormatter(logging.Formatter('%(levelname)s|%(message)s'))\n"
        "    lg.addHandler(h)\n    lg.propagate = False\n    return lg\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code gave the logger 'audit' a handler",
    ),
    "a logger whose handler list the candidate's code assigns": (
        "import logging\n\n\ndef make_logger(name):\n"
        '    """The logger `name` with exactly one StreamHandler."""\n',
        _d(
            """
            import logging
            def check(candidate):
                candidate('svc.worker')
                candidate('svc.worker')
                assert len(logging.getLogger('svc.worker').handlers) == 1
            """
        ),
        "make_logger",
        "    lg = logging.getLogger(name)\n    lg.handlers[:] = [logging.StreamHandler()]\n"
        "    return lg\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code gave the logger 'svc.worker' a handler",
    ),
    "a logger whose handler list the candidate's code appends to": (
        "import logging\n\n\ndef attach(name):\n"
        '    """Give the logger `name` a StreamHandler."""\n',
        _d(
            """
            import logging
            def check(candidate):
                candidate('jobs')
                assert logging.getLogger('jobs').handlers
            """
        ),
        "attach",
        "    logging.getLogger(name).handlers.append(logging.StreamHandler())\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code gave the logger 'jobs' a handler",
    ),
    "output past the check's budget, then what the test captures": (
        'def shout(n):\n    """Print "x" * n to stderr, then "done" to stdout."""\n',
        _d(
            """
            import contextlib, io
            def check(candidate):
                with contextlib.redirect_stderr(io.StringIO()):
                    candidate(2_000_000)
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    candidate(0)
                assert out.getvalue() == 'done\\n', repr(out.getvalue())
            """
        ),
        "shout",
        "    import sys\n    print('x' * n, file=sys.stderr)\n    print('done')\n",
        "failed",
        "passed",
        "strict scoring passes on at most",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("output"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(LIMITS))
def test_output_that_cannot_reach_the_test_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_what_reaches_the_test_is_judged_alike(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
