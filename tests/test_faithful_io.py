"""Output, input, files and time, judged as the single program judges them:
what the candidate prints (stdout, stderr, ``print``'s arguments) captured by
the test, main blocks, stdin read by the candidate, files and temporary
files it writes, sleeping and measuring time.

Each shape is a HumanEval-format problem with a right and a wrong answer,
scored in one strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import judged_alike, score_both

from aioeval.types import CandidateResult

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    # output and main blocks
    "sys.stdout.write and print end captured": (
        'def show(xs):\n    """print xs space separated, no newline"""\n',
        "import io, contextlib\ndef check(candidate):\n    buf = io.StringIO()\n    with contextlib.redirect_stdout(buf):\n        candidate([1, 2])\n    assert buf.getvalue() == '1 2'\n",
        "show",
        "    import sys\n    sys.stdout.write(' '.join(map(str, xs)))\n",
        "    print(*xs)\n",
    ),
    "stderr captured": (
        'def warn(msg):\n    """print msg to stderr"""\n',
        "import io, contextlib\ndef check(candidate):\n    buf = io.StringIO()\n    with contextlib.redirect_stderr(buf):\n        candidate('x')\n    assert buf.getvalue() == 'x\\n'\n",
        "warn",
        "    import sys\n    print(msg, file=sys.stderr)\n",
        "    print(msg)\n",
    ),
    "stdout swapped by hand": (
        'def show(x):\n    """print x"""\n',
        "import io, sys\ndef check(candidate):\n    old = sys.stdout\n    sys.stdout = io.StringIO()\n    try:\n        candidate(5)\n        out = sys.stdout.getvalue()\n    finally:\n        sys.stdout = old\n    assert out == '5\\n'\n",
        "show",
        "    print(x)\n",
        "    print(x + 1)\n",
    ),
    "print with flush and sep": (
        'def show(a, b):\n    """print a-b"""\n',
        "import io, contextlib\ndef check(candidate):\n    buf = io.StringIO()\n    with contextlib.redirect_stdout(buf):\n        candidate(1, 2)\n        print('end')\n    assert buf.getvalue() == '1-2\\nend\\n'\n",
        "show",
        "    print(a, b, sep='-', flush=True)\n",
        "    print(a, b, sep='+', flush=True)\n",
    ),
    "the candidate captures what the test's callback prints": (
        'import io, contextlib\n\n\ndef capture(fn):\n    """Call fn() and return what it printed."""\n',
        "import io, contextlib\ndef check(candidate):\n    outer = io.StringIO()\n"
        "    with contextlib.redirect_stdout(outer):\n"
        "        got = candidate(lambda: print('hi'))\n        print('after')\n"
        "    assert got == 'hi\\n', got\n    assert outer.getvalue() == 'after\\n', outer.getvalue()\n",
        "capture",
        "    buf = io.StringIO()\n    with contextlib.redirect_stdout(buf):\n        fn()\n"
        "    return buf.getvalue()\n",
        "    fn()\n    return ''\n",
    ),
    "the candidate captures what the test's callback writes to stderr": (
        'import io, contextlib\n\n\ndef errors(fn):\n    """Call fn() and return what it wrote to stderr."""\n',
        "import sys\ndef check(candidate):\n"
        "    assert candidate(lambda: print('bad', file=sys.stderr)) == 'bad\\n'\n",
        "errors",
        "    buf = io.StringIO()\n    with contextlib.redirect_stderr(buf):\n        fn()\n"
        "    return buf.getvalue()\n",
        "    buf = io.StringIO()\n    with contextlib.redirect_stdout(buf):\n        fn()\n"
        "    return buf.getvalue()\n",
    ),
    "a main block that prints": (
        'def f():\n    """return 1 (does not read input)"""\n',
        "def check(candidate):\n    assert candidate() == 1\n",
        "f",
        "    return 1\n\n\nif __name__ == '__main__':\n    print(f())\n",
        "    return 2\n\n\nif __name__ == '__main__':\n    print(f())\n",
    ),
    "doctest.testmod in the main block": (
        'def f(x):\n    """\n    >>> f(1)\n    2\n    """\n',
        "def check(candidate):\n    assert candidate(3) == 4\n",
        "f",
        "    return x + 1\n\n\nif __name__ == '__main__':\n    import doctest\n    doctest.testmod()\n",
        "    return x\n\n\nif __name__ == '__main__':\n    import doctest\n    doctest.testmod()\n",
    ),
    "main block reads input": (
        'def f(x):\n    """x + 1"""\n',
        "def check(candidate):\n    assert candidate(3) == 4\n",
        "f",
        "    return x + 1\n\n\nif __name__ == '__main__':\n    try:\n        n = int(input())\n    except EOFError:\n        n = 0\n    print(f(n))\n",
        "    return x\n",
    ),
    # other
    "candidate writes and reads a file": (
        'def roundtrip(s):\n    """write s to a file in the current directory, read it back"""\n',
        "def check(candidate):\n    assert candidate('hi\\nthere') == 'hi\\nthere'\n",
        "roundtrip",
        "    with open('tmp_rt.txt', 'w') as f:\n        f.write(s)\n    with open('tmp_rt.txt') as f:\n        return f.read()\n",
        "    with open('tmp_rt.txt', 'w') as f:\n        f.write(s.upper())\n    with open('tmp_rt.txt') as f:\n        return f.read()\n",
    ),
    "candidate uses tempfile": (
        'def roundtrip(s):\n    """through a temp file"""\n',
        "def check(candidate):\n    assert candidate('abc') == 'abc'\n",
        "roundtrip",
        "    import tempfile\n    with tempfile.TemporaryFile('w+') as f:\n        f.write(s)\n        f.seek(0)\n        return f.read()\n",
        "    import tempfile\n    with tempfile.TemporaryFile('w+') as f:\n        f.write(s)\n        return f.read()\n",
    ),
    "candidate sleeps briefly": (
        'def slow(x):\n    """x after a short sleep"""\n',
        "def check(candidate):\n    assert candidate(1) == 1\n",
        "slow",
        "    import time\n    time.sleep(0.3)\n    return x\n",
        "    import time\n    time.sleep(0.3)\n    return -x\n",
    ),
    "candidate measures time": (
        'def timed(f):\n    """(f(), seconds taken)"""\n',
        "def check(candidate):\n    v, t = candidate(lambda: 5)\n    assert v == 5 and 0 <= t < 1\n",
        "timed",
        "    import time\n    t = time.perf_counter()\n    v = f()\n    return v, time.perf_counter() - t\n",
        "    return f(), -1\n",
    ),
    # more state, values and calls
    "candidate reads stdin": (
        'def lines():\n    """the lines of stdin"""\n',
        "def check(candidate):\n    assert candidate() == []\n",
        "lines",
        "    import sys\n    return sys.stdin.read().splitlines()\n",
        "    return ['']\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("io"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_io_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
