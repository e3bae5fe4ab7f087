"""The shared directory's one rule, named where a check fails on it: each
side's files are its own to change. The candidate reads the test's files
and the test reads the candidate's, as in one program; a candidate that
writes, renames or removes a file the test made, or a test that writes
into a directory the candidate made, fails with a ``strict scoring``
reason that says so (docs/strict-scoring.md, "Files"), never a bare
``PermissionError``.

Each case is a problem with one honest answer, scored in one strict and
one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_WRITE = 'import os\n\n\ndef save(path, text):\n    """Write text to the file at path."""\n'
_READ_ONLY_TEST = _d(
    """
    import os
    def check(candidate):
        p = 'ro.txt'
        with open(p, 'w') as f:
            f.write('kept')
        os.chmod(p, 0o444)
        assert {call}
        assert open(p).read() == 'kept'
    """
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "the candidate reads the test's file and writes its own beside it": (
        'def upper_copy(src, dst):\n    """Write src\'s text upper-cased to dst."""\n',
        _d(
            """
            import os, tempfile
            def check(candidate):
                with tempfile.TemporaryDirectory() as d:
                    src, dst = os.path.join(d, 'a.txt'), os.path.join(d, 'b.txt')
                    with open(src, 'w') as f:
                        f.write('hi')
                    candidate(src, dst)
                    assert open(dst).read() == 'HI'
            """
        ),
        "upper_copy",
        "    with open(src) as f, open(dst, 'w') as g:\n        g.write(f.read().upper())\n",
        "    with open(src) as f, open(dst, 'w') as g:\n        g.write(f.read())\n",
    ),
    "the candidate writes atomically into the test's output directory, which the test removes": (
        _WRITE,
        _d(
            """
            import os, shutil
            def check(candidate):
                os.makedirs('out', exist_ok=True)
                candidate(os.path.join('out', 'r.txt'), 'ok')
                assert open(os.path.join('out', 'r.txt')).read() == 'ok'
                shutil.rmtree('out')
                assert not os.path.exists('out')
            """
        ),
        "save",
        "    tmp = path + '.tmp'\n    with open(tmp, 'w') as f:\n        f.write(text)\n"
        "    os.replace(tmp, path)\n",
        "    with open(path, 'w') as f:\n        f.write(text.upper())\n",
    ),
    "the candidate tries to append to a file the test made read-only, and falls back": (
        'def note(path, text):\n    """Append text to the file at path if it may be written; '
        'return whether it was."""\n',
        _READ_ONLY_TEST.format(call="candidate(p, 'x') is False"),
        "note",
        "    try:\n        with open(path, 'a') as f:\n            f.write(text)\n"
        "    except OSError:\n        return False\n    return True\n",
        "    return True\n",
    ),
    "the candidate asks os.access whether a file the test made read-only may be written": (
        'import os\n\n\ndef writable(path):\n    """Whether the file at path may be written."""\n',
        _READ_ONLY_TEST.format(call="candidate(p) is False"),
        "writable",
        "    return os.access(path, os.W_OK)\n",
        "    return os.access(path, os.R_OK)\n",
    ),
}

_TRIM = 'def trim(path, n):\n    """Keep the last n lines of the text file at path, in place."""\n'
_TRIM_TEST = _d(
    """
    import os, tempfile
    def check(candidate):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, 'log.txt')
            with open(p, 'w') as f:
                f.write('a\\nb\\nc\\n')
            candidate(p, 1)
            assert open(p).read() == 'c\\n'
    """
)
_ROLL = 'import os\n\n\ndef roll(path):\n    """Rename the file at path to path + ".1"."""\n'
_ROLL_TEST = _d(
    """
    import os, tempfile
    def check(candidate):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, 'app.log')
            open(p, 'w').close()
            candidate(p)
            assert os.listdir(d) == ['app.log.1']
    """
)
_INTO = 'import os, tempfile\n\n\ndef make_dir():\n    """A new temporary directory\'s path."""\n'
_INTO_TEST = _d(
    """
    import os
    def check(candidate):
        d = candidate()
        with open(os.path.join(d, 'x.txt'), 'w') as f:
            f.write('x')
        assert open(os.path.join(d, 'x.txt')).read() == 'x'
    """
)

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "the test reads a file the candidate made for its own user only": (
        'import os\n\n\ndef save_secret(folder, text):\n    """Write text to folder/secret'
        ' readable by the owner only (0600); return the path."""\n',
        _d(
            """
            import os, stat, tempfile
            def check(candidate):
                with tempfile.TemporaryDirectory() as d:
                    p = candidate(d, "s3cret")
                    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
                    assert open(p).read() == "s3cret"
            """
        ),
        "save_secret",
        "    p = os.path.join(folder, 'secret')\n"
        "    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)\n"
        "    with os.fdopen(fd, 'w') as f:\n        f.write(text)\n    return p\n",
        "failed",
        "passed",
        "strict scoring: the test may not read",
    ),
    "the candidate writes into a file the test made": (
        _TRIM,
        _TRIM_TEST,
        "trim",
        "    lines = open(path).readlines()\n    with open(path, 'w') as f:\n"
        "        f.writelines(lines[-n:])\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code may not change",
    ),
    "the candidate renames a file the test made": (
        _ROLL,
        _ROLL_TEST,
        "roll",
        "    os.rename(path, path + '.1')\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code may not change",
    ),
    "the candidate moves a file the test made with shutil.move": (
        "import shutil\n\n\n" + _ROLL.replace("import os\n\n\n", ""),
        _ROLL_TEST,
        "roll",
        "    shutil.move(path, path + '.1')\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code may not change",
    ),
    "the test writes into a directory the candidate made": (
        _INTO,
        _INTO_TEST,
        "make_dir",
        "    return tempfile.mkdtemp()\n",
        "failed",
        "passed",
        "strict scoring: the test may not write",
    ),
    "the test's tearDown removes a directory tree the candidate made": (
        'import os\n\n\ndef report(day, folder):\n    """Write folder/<day>.txt (making folder,'
        ' relative to the working directory); return its path."""\n',
        _d(
            """
            import io, os, tempfile, unittest
            class T(unittest.TestCase):
                def setUp(self):
                    self.old, self.tmp = os.getcwd(), tempfile.TemporaryDirectory()
                    os.chdir(self.tmp.name)
                def tearDown(self):
                    os.chdir(self.old)
                    self.tmp.cleanup()
                def test_write(self):
                    self.assertEqual(report("d1", "out/daily"), "out/daily/d1.txt")
            def check(candidate):
                global report
                report = candidate
                r = unittest.TextTestRunner(stream=io.StringIO()).run(
                    unittest.defaultTestLoader.loadTestsFromTestCase(T))
                assert r.wasSuccessful(), r.failures + r.errors
            """
        ),
        "report",
        "    os.makedirs(folder, exist_ok=True)\n    path = f'{folder}/{day}.txt'\n"
        "    open(path, 'w').close()\n    return path\n",
        "failed",
        "passed",
        "strict scoring: the test may not remove or rename",
    ),
}

_KEEP = 'import os, pathlib, shutil\n\n\ndef size(path):\n    """The size of the file at path, which stays as it is."""\n'
_KEEP_TEST = _d(
    """
    import os, stat
    def check(candidate):
        os.makedirs('in', exist_ok=True)
        p = os.path.join('in', 'data.txt')
        with open(p, 'w') as f:
            f.write('abc')
        assert candidate(p) == 3
        assert os.path.exists(p), 'removed'
        assert open(p).read() == 'abc', 'changed'
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o644, 'mode changed'
    """
)
_SIZE = "    n = os.path.getsize(path)\n"
_SWALLOWED_REASON = "strict scoring: the candidate's code may not change in/data.txt"

# Wrong answers whose one fault is a change of the test's file that the
# files rule refuses and the answer's code swallows: in one program the
# change happens and the test fails it, so strict fails them too, by name.
# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
SWALLOWED: dict[str, tuple[str, str, str, str, str, str, str]] = {
    name: (_KEEP, _KEEP_TEST, "size", _SIZE + body + "    return n\n", "failed", "failed", reason)
    for name, body, reason in (
        (
            "rewrites the test's file in place inside except OSError",
            "    try:\n        with open(path, 'w') as f:\n            f.write('ABC')\n"
            "    except OSError:\n        pass\n",
            _SWALLOWED_REASON,
        ),
        (
            "removes the test's file inside except OSError",
            "    try:\n        os.remove(path)\n    except OSError:\n        pass\n",
            _SWALLOWED_REASON,
        ),
        (
            "renames the test's file away inside except OSError",
            "    try:\n        os.rename(path, path + '.bak')\n    except OSError:\n        pass\n",
            _SWALLOWED_REASON,
        ),
        (
            "rewrites the test's file only where os.access says it may",
            "    if os.access(path, os.W_OK):\n        pathlib.Path(path).write_text('ABC')\n",
            _SWALLOWED_REASON,
        ),
        (
            "changes the mode of the test's file inside except OSError",
            "    try:\n        os.chmod(path, 0o600)\n    except OSError:\n        pass\n",
            _SWALLOWED_REASON,
        ),
        (
            "removes the test's directory with shutil.rmtree(ignore_errors=True)",
            "    shutil.rmtree(os.path.dirname(path), ignore_errors=True)\n",
            "strict scoring: the candidate's code may not change in/",
        ),
    )
}

SWALLOWED["the test catches the refusal the candidate's rewrite raises"] = (
    _KEEP,
    _KEEP_TEST.replace(
        "assert candidate(p) == 3", "try:\n        candidate(p)\n    except OSError:\n        pass"
    ),
    "size",
    _SIZE + "    with open(path, 'w') as f:\n        f.write('ABC')\n    return n\n",
    "failed",
    "failed",
    _SWALLOWED_REASON,
)


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("files"), SHAPES, {**LIMITS, **SWALLOWED})


@pytest.mark.parametrize("name", list(SHAPES))
def test_files_both_sides_read_are_judged_as_one_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_a_check_that_fails_on_the_files_rule_names_it(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)


@pytest.mark.parametrize("name", list(SWALLOWED))
def test_a_change_the_files_rule_refused_fails_the_check_though_the_answer_swallows_it(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, SWALLOWED)
