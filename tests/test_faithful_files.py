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
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("files"), SHAPES, LIMITS)


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
