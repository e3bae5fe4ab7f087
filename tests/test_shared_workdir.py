"""The work directory a check and its candidate share under strict scoring.

Honest shapes (a temporary file the test writes and the candidate reads by
path, an output file the candidate writes and the test reads, relative
paths in the working directory) are judged as the single program judges
them. Attacks on the test's own files (rewrite, replace, rename, unlink,
a symlink planted where the test writes, a thread racing the test's read)
never change a verdict: each attacking answer is wrong, and stays failed.
"""

from __future__ import annotations

import pytest
from test_faithful import judged_alike, score_both

from aioeval.types import CandidateResult

_READ = (
    'def first_line(path):\n    """The first line of the file at path, without its newline."""\n'
)
_READ_RIGHT = "    with open(path) as fh:\n        return fh.readline().rstrip('\\n')\n"
_READ_WRONG = "    with open(path) as fh:\n        return fh.readline()\n"
_WRITE = 'def save(path, xs):\n    """Write xs to path, one per line."""\n'
_WRITE_RIGHT = "    with open(path, 'w') as fh:\n        fh.writelines(f'{x}\\n' for x in xs)\n"
_WRITE_WRONG = "    with open(path, 'w') as fh:\n        fh.writelines(f'{x} ' for x in xs)\n"

# name: (prompt, test, entry, right answer, wrong answer)
HONEST: dict[str, tuple[str, str, str, str, str]] = {
    "a tempfile the test writes, read by the candidate by path": (
        _READ,
        "import tempfile, os\ndef check(candidate):\n"
        "    fd, path = tempfile.mkstemp(suffix='.txt')\n"
        "    with os.fdopen(fd, 'w') as fh:\n        fh.write('alpha\\nbeta\\n')\n"
        "    assert candidate(path) == 'alpha'\n",
        "first_line",
        _READ_RIGHT,
        _READ_WRONG,
    ),
    "a file the candidate writes, read back by the test": (
        _WRITE,
        "import os, tempfile\ndef check(candidate):\n"
        "    path = os.path.join(tempfile.gettempdir(), 'out.txt')\n"
        "    candidate(path, [1, 2])\n"
        "    with open(path) as fh:\n        assert fh.read() == '1\\n2\\n'\n",
        "save",
        _WRITE_RIGHT,
        _WRITE_WRONG,
    ),
    "a file the candidate writes in a directory the test made": (
        _WRITE,
        "import os, tempfile\ndef check(candidate):\n"
        "    d = tempfile.mkdtemp()\n"
        "    candidate(os.path.join(d, 'out.txt'), [3])\n"
        "    with open(os.path.join(d, 'out.txt')) as fh:\n        assert fh.read() == '3\\n'\n",
        "save",
        _WRITE_RIGHT,
        _WRITE_WRONG,
    ),
    "a file the candidate writes in an output directory the test made with os.makedirs": (
        _WRITE,
        "import os\ndef check(candidate):\n"
        "    os.makedirs(os.path.join('out', 'sub'), exist_ok=True)\n"
        "    candidate(os.path.join('out', 'sub', 'r.txt'), [1, 2])\n"
        "    with open(os.path.join('out', 'sub', 'r.txt')) as fh:\n"
        "        assert fh.read() == '1\\n2\\n'\n",
        "save",
        _WRITE_RIGHT,
        _WRITE_WRONG,
    ),
    "a file the candidate writes in a directory the test made with pathlib": (
        _WRITE,
        "import pathlib\ndef check(candidate):\n"
        "    d = pathlib.Path('reports') / 'daily'\n    d.mkdir(parents=True)\n"
        "    candidate(str(d / 'r.txt'), [4])\n"
        "    assert (d / 'r.txt').read_text() == '4\\n'\n",
        "save",
        _WRITE_RIGHT,
        _WRITE_WRONG,
    ),
    "a file the candidate writes in a directory the test made with its own mode": (
        _WRITE,
        "import os\ndef check(candidate):\n"
        "    os.mkdir('private', 0o700)\n"
        "    candidate('private/r.txt', [5])\n"
        "    with open('private/r.txt') as fh:\n        assert fh.read() == '5\\n'\n",
        "save",
        _WRITE_RIGHT,
        _WRITE_WRONG,
    ),
    "relative paths in the working directory": (
        _READ,
        "def check(candidate):\n"
        "    with open('data.txt', 'w') as fh:\n        fh.write('gamma\\n')\n"
        "    assert candidate('data.txt') == 'gamma'\n",
        "first_line",
        _READ_RIGHT,
        _READ_WRONG,
    ),
}

_EXPECTED = (
    "import os\ndef check(candidate):\n"
    "    with open('expected.txt', 'w') as fh:\n        fh.write('1\\n2\\n')\n"
    "    candidate('out.txt', [1, 2])\n"
    "    with open('out.txt') as fh, open('expected.txt') as ex:\n"
    "        assert fh.read() == ex.read()\n"
)
_FORGE = "    open(path, 'w').write('forged')\n"

# Each attack is a wrong answer (it writes 'forged') that tries to make the
# test's expected file read the same: name -> (test, completion)
ATTACKS: dict[str, tuple[str, str]] = {
    "rewrites or replaces the expected file in the test's own temporary directory": (
        "import os, tempfile\ndef check(candidate):\n"
        "    d = tempfile.mkdtemp()\n"
        "    with open(os.path.join(d, 'expected.txt'), 'w') as fh:\n        fh.write('1\\n2\\n')\n"
        "    candidate(os.path.join(d, 'out.txt'), [1, 2])\n"
        "    with open(os.path.join(d, 'out.txt')) as fh, open(os.path.join(d, 'expected.txt')) as ex:\n"
        "        assert fh.read() == ex.read()\n",
        _FORGE + "    import os\n    d = os.path.dirname(path)\n"
        "    for way in (lambda: open(os.path.join(d, 'expected.txt'), 'w').write('forged'),\n"
        "                lambda: os.unlink(os.path.join(d, 'expected.txt')),\n"
        "                lambda: (open(os.path.join(d, 'x'), 'w').write('forged'),\n"
        "                         os.replace(os.path.join(d, 'x'), os.path.join(d, 'expected.txt')))):\n"
        "        try:\n            way()\n        except OSError:\n            pass\n",
    ),
    "rewrites the test's expected file": (
        _EXPECTED,
        _FORGE + "    try:\n        open('expected.txt', 'w').write('forged')\n"
        "    except OSError:\n        pass\n",
    ),
    "replaces the test's expected file by a rename over it": (
        _EXPECTED,
        _FORGE + "    open('x.tmp', 'w').write('forged')\n    import os\n"
        "    try:\n        os.replace('x.tmp', 'expected.txt')\n    except OSError:\n        pass\n",
    ),
    "unlinks the test's expected file and writes its own": (
        _EXPECTED,
        _FORGE + "    import os\n    try:\n        os.unlink('expected.txt')\n"
        "    except OSError:\n        pass\n"
        "    try:\n        open('expected.txt', 'w').write('forged')\n"
        "    except OSError:\n        pass\n",
    ),
    "renames the test's expected file away": (
        _EXPECTED,
        _FORGE + "    import os\n    try:\n        os.rename('expected.txt', 'gone.txt')\n"
        "        open('expected.txt', 'w').write('forged')\n"
        "    except OSError:\n        pass\n",
    ),
    "links the test's expected file into its own name": (
        _EXPECTED,
        "    import os\n    try:\n        os.link('expected.txt', path)\n"
        "    except OSError:\n        open(path, 'w').write('forged')\n",
    ),
    "plants a symlink where the test writes, out to the test's setup": (
        "import os, sys\ndef check(candidate):\n"
        "    candidate('out.txt', [1, 2])\n"
        "    with open('expected.txt', 'w') as fh:\n        fh.write('1\\n2\\n')\n"
        "    with open('out.txt') as fh, open('expected.txt') as ex:\n"
        "        assert fh.read() == ex.read()\n",
        "    import os\n    open('mine.txt', 'w').write('forged')\n"
        "    os.chmod('mine.txt', 0o666)\n"
        "    os.symlink('mine.txt', 'expected.txt')\n"
        "    os.symlink('mine.txt', path)\n",
    ),
    "makes the file the test will write, and rewrites it in a later call": (
        "import os\ndef check(candidate):\n"
        "    candidate('out.txt', [1, 2])\n"
        "    with open('expected.txt', 'w') as fh:\n        fh.write('1\\n2\\n')\n"
        "    candidate('out.txt', [1, 2])\n"
        "    with open('out.txt') as fh, open('expected.txt') as ex:\n"
        "        assert fh.read() == ex.read()\n",
        "    import os\n    global _fd\n    if '_fd' not in globals():\n"
        "        _fd = os.open('expected.txt', os.O_CREAT | os.O_RDWR, 0o666)\n"
        "        os.fchmod(_fd, 0o666)\n"
        "    else:\n        os.pwrite(_fd, b'forged', 0)\n        os.ftruncate(_fd, 6)\n"
        "    open(path, 'w').write('forged')\n",
    ),
    "races the test's read with a thread": (
        "import os\ndef check(candidate):\n"
        "    with open('expected.txt', 'w') as fh:\n        fh.write('1\\n2\\n')\n"
        "    candidate('out.txt', [1, 2])\n"
        "    for _ in range(200):\n"
        "        with open('out.txt') as fh, open('expected.txt') as ex:\n"
        "            assert fh.read() == ex.read()\n",
        "    import os, threading\n    open(path, 'w').write('forged')\n"
        "    def spin():\n        while True:\n            for f in ('expected.txt', path):\n"
        "                try:\n                    with open(f, 'r+') as fh:\n"
        "                        fh.write('forged')\n                except OSError:\n"
        "                    pass\n"
        "    threading.Thread(target=spin, daemon=True).start()\n",
    ),
}


REFUSED = (
    "plants a symlink where the test writes, out to the test's setup",
    "makes the file the test will write, and rewrites it in a later call",
)
"""Attacks the check's guard refuses by name (`sharedwd.guard`): without it
the test would write into the candidate's file and the wrong answer pass."""


def _attack_problems() -> dict[str, tuple[str, str, str, str, str]]:
    """Each attack as a shape: the honest writer first, the attack second."""
    return {
        name: (_WRITE, test, "save", _WRITE_RIGHT, attack)
        for name, (test, attack) in ATTACKS.items()
    }


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("sharedwd"), {**HONEST, **_attack_problems()}, {})


@pytest.mark.parametrize("name", list(HONEST))
def test_honest_file_shapes_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_on_the_tests_files_never_passes_strict(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    strict = verdicts["strict"]
    assert strict[(name, 0)].status == "passed", strict[(name, 0)].reason
    assert strict[(name, 1)].status != "passed", strict[(name, 1)]
    if name in REFUSED:
        assert "the candidate made this name" in strict[(name, 1)].reason, strict[(name, 1)]
