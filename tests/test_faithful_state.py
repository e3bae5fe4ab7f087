"""Interpreter-wide state between the test and the candidate, both ways,
judged as the single program judges it: the ``csv`` field size limit, the
garbage collector, ``logging.disable``, the socket default timeout and the
warning filters cross (`sandbox/values/settings.py`, `mirror`); the test's
module-level ``random.seed`` reaches the candidate; a test that patches
``time.perf_counter`` with a fixed sequence does not feed the sandbox's
own clocks. ``LIMITS`` are the state the verifier does not take from the
candidate (the global generator's state, ``sys.path``, a signal handler):
where the test can see it, the check fails with a reason that says so.

Scored with one worker, so the call channel's readers poll (they read the
clock while they wait) on a machine with two or more cores."""

from __future__ import annotations

from pathlib import Path

import pytest
from scored import Verdicts, score, write_set
from test_faithful import _d, judged_alike, judged_as_listed

_LOGS_AFTER = _d(
    """
    import logging, unittest
    class T(unittest.TestCase):
        def test_restored(self):
            self.assertEqual(CAND(3), 6)
            with self.assertLogs('app', level='INFO'):
                logging.getLogger('app').info('still logging')
    def check(candidate):
        global CAND
        CAND = candidate
        result = unittest.TestResult()
        unittest.defaultTestLoader.loadTestsFromTestCase(T).run(result)
        assert result.wasSuccessful(), result.failures
    """
)
"""A test that the candidate's call leaves the test's own logging working."""

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "perf_counter patched with a fixed sequence": (
        'import time\n\n\ndef timed(fn):\n    """(fn(), seconds it took by time.perf_counter)"""\n',
        _d(
            """
            from unittest import mock
            def check(candidate):
                ticks = iter([10.0, 12.5])
                with mock.patch('time.perf_counter', side_effect=lambda: next(ticks)):
                    assert candidate(lambda: 'v') == ('v', 2.5)
            """
        ),
        "timed",
        "    t = time.perf_counter()\n    v = fn()\n    return v, time.perf_counter() - t\n",
        "    t = time.perf_counter()\n    v = fn()\n    return v, t - time.perf_counter()\n",
    ),
    "the test's module-level random.seed": (
        'import random\n\n\ndef deal():\n    """random.sample(range(52), 5) of the global generator"""\n',
        _d(
            """
            random.seed(2024)
            def check(candidate):
                got = candidate()
                random.seed(2024)
                assert got == random.sample(range(52), 5)
            """
        ),
        "deal",
        "    return random.sample(range(52), 5)\n",
        "    return random.sample(range(1, 53), 5)\n",
    ),
    "the test's csv field size limit": (
        'import csv\n\n\ndef widest(text):\n    """longest field of csv text; csv.Error past the limit"""\n',
        _d(
            """
            csv.field_size_limit(50)
            def check(candidate):
                assert candidate('a,bb\\n') == 2
                try:
                    candidate('x,' + 'y' * 60 + '\\n')
                except csv.Error:
                    pass
                else:
                    raise AssertionError('limit not applied')
            """
        ),
        "widest",
        "    return max(len(f) for row in csv.reader(text.splitlines()) for f in row)\n",
        "    return max(len(f) for line in text.splitlines() for f in line.split(','))\n",
    ),
    "a csv field size limit the candidate's call must put back": (
        'import csv\n\n\ndef rows(text):\n    """csv rows of text with fields up to 1 MB; the limit put back"""\n',
        _d(
            """
            def check(candidate):
                before = csv.field_size_limit()
                assert candidate('a,' + 'z' * 200_000) == [['a', 'z' * 200_000]]
                assert csv.field_size_limit() == before
            """
        ),
        "rows",
        "    old = csv.field_size_limit(1 << 20)\n    try:\n"
        "        return list(csv.reader(text.splitlines()))\n    finally:\n"
        "        csv.field_size_limit(old)\n",
        "    csv.field_size_limit(1 << 20)\n    return list(csv.reader(text.splitlines()))\n",
    ),
    "the garbage collector's state the caller had": (
        'import gc\n\n\ndef build(n):\n    """list(range(n)) with gc paused; gc as it was after"""\n',
        _d(
            """
            import gc
            def check(candidate):
                assert candidate(3) == [0, 1, 2]
                assert gc.isenabled()
                gc.disable()
                try:
                    assert candidate(2) == [0, 1]
                    assert not gc.isenabled()
                finally:
                    gc.enable()
            """
        ),
        "build",
        "    was = gc.isenabled()\n    gc.disable()\n    try:\n        return list(range(n))\n"
        "    finally:\n        if was:\n            gc.enable()\n",
        "    gc.disable()\n    try:\n        return list(range(n))\n    finally:\n        gc.enable()\n",
    ),
    "the socket default timeout left as it was": (
        'import socket\n\n\ndef probe(t):\n    """t * 2, the default socket timeout unchanged"""\n',
        "import socket\ndef check(candidate):\n    assert candidate(1.5) == 3.0\n"
        "    assert socket.getdefaulttimeout() is None\n",
        "probe",
        "    return t * 2\n",
        "    socket.setdefaulttimeout(t)\n    return t * 2\n",
    ),
    "logging.disable put back": (
        'import logging\n\n\ndef quiet(x):\n    """x * 2 with logging disabled meanwhile"""\n',
        _LOGS_AFTER,
        "quiet",
        "    logging.disable(logging.CRITICAL)\n    try:\n        return x * 2\n"
        "    finally:\n        logging.disable(logging.NOTSET)\n",
        "    logging.disable(logging.CRITICAL)\n    return x * 2\n",
    ),
    "warning filters left as they were": (
        'import warnings\n\n\ndef legacy(s):\n    """int(s), its DeprecationWarning silenced"""\n'
        "    warnings.warn('old', DeprecationWarning)\n    return int(s)\n\n\n"
        'def parse(s):\n    """legacy(s) with its warning silenced; the filters as before"""\n',
        _d(
            """
            import warnings
            def check(candidate):
                warnings.simplefilter('default')
                before = list(warnings.filters)
                assert candidate('42') == 42
                assert warnings.filters == before
            """
        ),
        "parse",
        "    with warnings.catch_warnings():\n"
        "        warnings.simplefilter('ignore', DeprecationWarning)\n        return legacy(s)\n",
        "    warnings.filterwarnings('ignore', category=DeprecationWarning)\n    return legacy(s)\n",
    ),
}


# name: (prompt, test, entry, answer, strict status, official status, strict reason)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "sys.stdout left replaced after the call": (
        'import io\nimport sys\n\n\ndef quiet(fn):\n    """fn() with its output captured;'
        ' return the text. sys.stdout as it was after."""\n',
        _d(
            """
            def check(candidate):
                saved = sys.stdout
                assert candidate(lambda: print("hi")) == "hi\\n"
                assert sys.stdout is saved
            """
        ),
        "quiet",
        "    sys.stdout = buf = io.StringIO()\n    fn()\n    return buf.getvalue()\n",
        "failed",
        "failed",
        "strict scoring: the candidate's code left sys.stdout replaced",
    ),
    "the global generator seeded by the candidate": (
        'import random\n\n\ndef pick(xs, seed):\n    """random.Random(seed).choice(xs); the global generator untouched"""\n',
        _d(
            """
            def check(candidate):
                random.seed(1)
                state = random.getstate()
                assert candidate([1, 2, 3], 5) == random.Random(5).choice([1, 2, 3])
                assert random.getstate() == state
            """
        ),
        "pick",
        "    random.seed(seed)\n    return random.choice(xs)\n",
        "failed",
        "failed",
        "strict scoring: the test used the global random generator after the candidate's code",
    ),
    "a plugin directory left on sys.path": (
        'import importlib, sys\n\n\ndef load(d, name):\n    """import name from directory d; sys.path as before"""\n',
        _d(
            """
            import os, sys, tempfile
            def check(candidate):
                d = tempfile.mkdtemp()
                with open(os.path.join(d, 'plug_w13.py'), 'w') as f:
                    f.write('V = 4\\n')
                before = list(sys.path)
                assert candidate(d, 'plug_w13').V == 4
                assert sys.path == before
            """
        ),
        "load",
        "    sys.path.append(d)\n    return importlib.import_module(name)\n",
        "failed",
        "failed",
        "strict scoring: the candidate's code left sys.path changed",
    ),
    "a SIGALRM handler left installed": (
        'import signal\n\n\ndef arm(s):\n    """a SIGALRM alarm in s seconds, then cancel it; the handler put back"""\n',
        _d(
            """
            import signal
            def check(candidate):
                before = signal.getsignal(signal.SIGALRM)
                candidate(5)
                assert signal.getsignal(signal.SIGALRM) is before
            """
        ),
        "arm",
        "    signal.signal(signal.SIGALRM, lambda *a: None)\n    signal.alarm(s)\n    signal.alarm(0)\n",
        "failed",
        "failed",
        "strict scoring: the candidate's code left its own handler for SIGALRM",
    ),
    "a drop-all filter left on the test's logger": (
        'import logging\n\n\ndef quiet(x):\n    """x * 2, logging as before afterwards"""\n',
        _LOGS_AFTER,
        "quiet",
        "    logging.getLogger('app').addFilter(lambda record: False)\n    return x * 2\n",
        "failed",
        "failed",
        "strict scoring: the candidate's code gave the logger 'app' a filter",
    ),
    "a randomized answer and the test's draws after it": (
        'import random\n\n\ndef pick_any(xs):\n    """any item of xs"""\n',
        "def check(candidate):\n    for _ in range(3):\n        xs = [random.random() for _ in range(4)]\n"
        "        assert candidate(xs) in xs\n",
        "pick_any",
        "    return random.choice(xs)\n",
        "failed",
        "passed",
        "strict scoring: the test used the global random generator after the candidate's code",
    ),
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdicts]:
    tmp: Path = tmp_path_factory.mktemp("state")
    problems, samples = [], []
    for name, (prompt, test, entry, *answers) in {**SHAPES, **LIMITS}.items():
        problems.append({"task_id": name, "prompt": prompt, "test": test, "entry_point": entry})
        answers = answers[:2] if name in SHAPES else answers[:1]
        samples += [{"task_id": name, "completion": c} for c in answers]
    write_set(tmp, problems, samples)
    return {m: score(tmp, m, "params.workers=1") for m in ("strict", "official")}


@pytest.mark.parametrize("name", list(SHAPES))
def test_process_state_crosses_as_in_one_program(verdicts: dict[str, Verdicts], name: str) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_state_the_verifier_does_not_take_is_named(
    verdicts: dict[str, Verdicts], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
