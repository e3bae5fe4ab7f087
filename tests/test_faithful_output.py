"""Where what the candidate's code logs or prints cannot reach the test as
in one program, the failed check says so: a logger the candidate's code
gives a handler of its own in its process, however it does (the test's
logger of that name has none), and output past the check's budget, which
is dropped.

Each case is a problem with one honest answer, scored in one strict and
one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_as_listed, score_both

from aioeval.types import CandidateResult

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
    return score_both(tmp_path_factory.mktemp("output"), {}, LIMITS)


@pytest.mark.parametrize("name", list(LIMITS))
def test_output_that_cannot_reach_the_test_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
