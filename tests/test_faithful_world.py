"""The test's world as the candidate's code meets it, judged as the single
program judges it: ``unittest.mock`` objects the candidate reads and enters
with ``with`` (a patched class's ``now()``, a patched function's result's
attributes, ``mock_open``), the test's streams and temporary directories,
``sys.stdin`` and module attributes the test assigns, the time zone it
sets with ``time.tzset``, the working directory it moves to, globals it
rebinds, and the test's own coroutines awaited by the candidate's.
``LIMITS`` are where the two processes cannot share what one program
shares: the result names why.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_MAP_ASYNC = 'import asyncio\n\n\nasync def map_async(fn, xs):\n    """[await fn(x) for x in xs], run concurrently"""\n'
_QUEUE_TEST = _d(
    """
    import asyncio
    def check(candidate):
        async def slow(x):
            await asyncio.sleep(0.002 * (3 - x))
            return x
        assert asyncio.run(candidate(slow, [1, 2, 3])) == [1, 2, 3]
    """
)
# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a patched class whose method the candidate calls": (
        'import datetime\n\n\ndef part_of_day():\n    """am before noon by datetime.datetime.now(), else pm"""\n',
        _d(
            """
            import datetime
            from unittest import mock
            def check(candidate):
                for hour, want in [(9, 'am'), (12, 'pm'), (23, 'pm')]:
                    fixed = datetime.datetime(2024, 5, 1, hour, 30)
                    with mock.patch('datetime.datetime') as dt:
                        dt.now.return_value = fixed
                        assert candidate() == want
                        dt.now.assert_called_once_with()
            """
        ),
        "part_of_day",
        "    return 'am' if datetime.datetime.now().hour < 12 else 'pm'\n",
        "    return 'am' if datetime.datetime.now().hour <= 12 else 'pm'\n",
    ),
    "attributes of a patched function's result": (
        'import subprocess\n\n\ndef head(repo):\n    """stdout of [git, -C, repo, rev-parse, HEAD] stripped, or None on a non-zero return code"""\n',
        _d(
            """
            from unittest import mock
            def check(candidate):
                with mock.patch('subprocess.run') as run:
                    run.return_value.returncode = 0
                    run.return_value.stdout = 'abc\\n'
                    assert candidate('/r') == 'abc'
                    assert run.call_args[0][0] == ['git', '-C', '/r', 'rev-parse', 'HEAD']
                    run.return_value.returncode = 1
                    assert candidate('/r') is None
            """
        ),
        "head",
        "    r = subprocess.run(['git', '-C', repo, 'rev-parse', 'HEAD'], capture_output=True, text=True)\n"
        "    return r.stdout.strip() if r.returncode == 0 else None\n",
        "    r = subprocess.run(['git', '-C', repo, 'rev-parse', 'HEAD'], capture_output=True, text=True)\n"
        "    return r.stdout.strip()\n",
    ),
    "mock_open entered with with": (
        'def count_words(path):\n    """the number of whitespace-separated words in the file"""\n',
        _d(
            """
            from unittest import mock
            def check(candidate):
                m = mock.mock_open(read_data='a b\\nc\\n')
                with mock.patch('builtins.open', m):
                    assert candidate('/x.txt') == 3
                m.assert_called_once_with('/x.txt')
            """
        ),
        "count_words",
        "    with open(path) as f:\n        return len(f.read().split())\n",
        "    with open(path) as f:\n        return len(f.readline().split())\n",
    ),
    "the test's context manager entered by the candidate": (
        'def guarded(lock, fn):\n    """fn() while holding lock (with lock: ...)"""\n',
        _d(
            """
            class Lock:
                def __init__(self):
                    self.log = []
                def __enter__(self):
                    self.log.append('in')
                    return self
                def __exit__(self, *exc):
                    self.log.append('out')
                    return False
            def check(candidate):
                lock = Lock()
                assert candidate(lock, lambda: lock.log[:]) == ['in']
                assert lock.log == ['in', 'out']
            """
        ),
        "guarded",
        "    with lock:\n        return fn()\n",
        "    return fn()\n",
    ),
    "sys.stdin the test assigns": (
        'import sys\n\n\ndef total():\n    """the sum of the ints read from standard input"""\n',
        _d(
            """
            import io, sys
            def check(candidate):
                old = sys.stdin
                sys.stdin = io.StringIO('1 2\\n3\\n')
                try:
                    assert candidate() == 6
                finally:
                    sys.stdin = old
            """
        ),
        "total",
        "    return sum(int(t) for t in sys.stdin.read().split())\n",
        "    return sum(int(t) for t in sys.stdin.readline().split())\n",
    ),
    "input() from the sys.stdin the test assigns": (
        'def ask_twice():\n    """two lines of input() as ints, added"""\n',
        _d(
            """
            import io, sys
            def check(candidate):
                sys.stdin = io.StringIO('4\\n5\\n')
                assert candidate() == 9
            """
        ),
        "ask_twice",
        "    return int(input()) + int(input())\n",
        "    return int(input()) * 2\n",
    ),
    "a module attribute the test assigns at module level": (
        'import math\n\n\ndef area(r):\n    """math.pi * r * r"""\n',
        "import math\nmath.pi = 3\n\n\ndef check(candidate):\n    assert candidate(2) == 12\n",
        "area",
        "    return math.pi * r * r\n",
        "    return 3.14159 * r * r\n",
    ),
    "a module attribute the test sets and puts back": (
        'import string\n\n\ndef letters():\n    """string.ascii_lowercase upper-cased"""\n',
        _d(
            """
            import string
            def check(candidate):
                old = string.ascii_lowercase
                string.ascii_lowercase = 'xyz'
                try:
                    assert candidate() == 'XYZ'
                finally:
                    string.ascii_lowercase = old
                assert candidate() == old.upper()
            """
        ),
        "letters",
        "    return string.ascii_lowercase.upper()\n",
        "    return 'xyz'.upper()\n",
    ),
    "a builtin the test replaces, called by the candidate": (
        'def greet():\n    """print hi"""\n',
        "import builtins\n\n\ndef check(candidate):\n    seen = []\n    real = builtins.print\n"
        "    builtins.print = lambda *a: seen.append(a)\n    try:\n        candidate()\n"
        "    finally:\n        builtins.print = real\n    assert seen == [('hi',)], seen\n",
        "greet",
        "    print('hi')\n",
        "    print('hi', 'there')\n",
    ),
    "the candidate's output and input() with the sys.stdin the test assigns": (
        'def solve():\n    """read n, then n numbers on one line; print their sum"""\n',
        "import io, sys, contextlib\ndef check(candidate):\n    sys.stdin = io.StringIO('3\\n1 2 3\\n')\n"
        "    buf = io.StringIO()\n    with contextlib.redirect_stdout(buf):\n        candidate()\n"
        "    sys.stdin = sys.__stdin__\n    assert buf.getvalue().strip() == '6'\n",
        "solve",
        "    n = int(input())\n    print(sum(map(int, input().split()[:n])))\n",
        "    n = int(input())\n    print(n)\n",
    ),
    "warnings the candidate issues, recorded by the test": (
        'import warnings\n\n\ndef old(x):\n    """x + 1, with a DeprecationWarning(\'old is deprecated\')"""\n',
        _d(
            """
            import warnings
            def check(candidate):
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter('always')
                    assert candidate(1) == 2
                assert len(w) == 1 and issubclass(w[0].category, DeprecationWarning)
                assert str(w[0].message) == 'old is deprecated'
            """
        ),
        "old",
        "    warnings.warn('old is deprecated', DeprecationWarning, stacklevel=2)\n    return x + 1\n",
        "    warnings.warn('old is deprecated', UserWarning)\n    return x + 1\n",
    ),
    "a warning the test turns into an error": (
        'import warnings\n\n\ndef ratio(a, b):\n    """a / b; for b == 0 warn RuntimeWarning and return 0.0"""\n',
        _d(
            """
            import unittest, warnings
            class T(unittest.TestCase):
                def test_warns(self):
                    with self.assertWarns(RuntimeWarning):
                        self.assertEqual(ratio(1, 0), 0.0)
                def test_error(self):
                    with warnings.catch_warnings():
                        warnings.simplefilter('error')
                        with self.assertRaises(RuntimeWarning):
                            ratio(1, 0)
                        self.assertEqual(ratio(1, 2), 0.5)
            def check(candidate):
                r = unittest.TextTestRunner(stream=open('/dev/null', 'w')).run(
                    unittest.defaultTestLoader.loadTestsFromTestCase(T))
                assert r.wasSuccessful(), r.failures + r.errors
            """
        ),
        "ratio",
        "    if b == 0:\n        warnings.warn('division by zero', RuntimeWarning)\n        return 0.0\n    return a / b\n",
        "    if b == 0:\n        return 0.0\n    return a / b\n",
    ),
    "the umask the test sets": (
        'import os\n\n\ndef umask():\n    """the process umask, unchanged"""\n',
        "import os\nos.umask(0o077)\n\n\ndef check(candidate):\n    assert candidate() == 0o077\n",
        "umask",
        "    m = os.umask(0)\n    os.umask(m)\n    return m\n",
        "    return 0o022\n",
    ),
    "the socket default timeout the test sets": (
        'import socket\n\n\ndef timeout():\n    """socket.getdefaulttimeout()"""\n',
        "import socket\nsocket.setdefaulttimeout(2.5)\n\n\ndef check(candidate):\n    assert candidate() == 2.5\n",
        "timeout",
        "    return socket.getdefaulttimeout()\n",
        "    return 2.0\n",
    ),
    "the time zone the test sets with time.tzset": (
        'import time\n\n\ndef local_hour(ts):\n    """time.localtime(ts).tm_hour"""\n',
        _d(
            """
            import os, time
            def check(candidate):
                os.environ['TZ'] = 'Asia/Tokyo'
                time.tzset()
                assert candidate(0) == 9
                os.environ['TZ'] = 'UTC'
                time.tzset()
                assert candidate(0) == 0
            """
        ),
        "local_hour",
        "    return time.localtime(ts).tm_hour\n",
        "    return time.gmtime(ts).tm_hour\n",
    ),
    "the working directory the test moves to, written to by the candidate": (
        'import os\n\n\ndef save(text):\n    """write text to out.txt in the working directory; its absolute path"""\n',
        _d(
            """
            import os, tempfile
            def check(candidate):
                old = os.getcwd()
                d = tempfile.mkdtemp()
                os.chdir(d)
                try:
                    p = candidate('hello')
                    assert os.path.dirname(p) in (d, os.path.realpath(d))
                    with open('out.txt') as f:
                        assert f.read() == 'hello'
                finally:
                    os.chdir(old)
            """
        ),
        "save",
        "    with open('out.txt', 'w') as f:\n        f.write(text)\n    return os.path.abspath('out.txt')\n",
        "    return os.path.abspath('out.txt')\n",
    ),
    "the working directory the test moves to at module level": (
        'def here():\n    """the working directory"""\n',
        "import os, tempfile\n\nos.chdir(tempfile.mkdtemp())\n\n\n"
        "def check(candidate):\n    assert candidate() == os.getcwd()\n",
        "here",
        "    import os\n    return os.getcwd()\n",
        "    import os\n    return os.path.dirname(os.getcwd())\n",
    ),
    "a prompt's global the test rebinds": (
        "import time\n\n\ndef now():\n    return time.time()\n\n\n"
        'def age(created):\n    """now() - created"""\n',
        _d(
            """
            def check(candidate):
                global now
                real = now
                now = lambda: 1000.0
                try:
                    assert candidate(400.0) == 600.0
                finally:
                    now = real
                assert candidate(0.0) > 1000.0
            """
        ),
        "age",
        "    return now() - created\n",
        "    return time.time() - created\n",
    ),
    "an IsolatedAsyncioTestCase whose coroutine the candidate's awaits": (
        'import asyncio\n\n\nasync def retry(op, attempts):\n    """await op() up to attempts times; the first result, else the last error"""\n',
        _d(
            """
            import io, unittest
            class T(unittest.IsolatedAsyncioTestCase):
                async def test_retries(self):
                    calls = []
                    async def op():
                        calls.append(1)
                        if len(calls) < 3:
                            raise ConnectionError('down')
                        return 'up'
                    self.assertEqual(await retry(op, 5), 'up')
                    self.assertEqual(len(calls), 3)
                async def test_gives_up(self):
                    async def op():
                        raise ConnectionError('down')
                    with self.assertRaises(ConnectionError):
                        await retry(op, 2)
            def check(candidate):
                r = unittest.TextTestRunner(stream=io.StringIO()).run(
                    unittest.defaultTestLoader.loadTestsFromTestCase(T))
                assert r.wasSuccessful(), r.failures + r.errors
            """
        ),
        "retry",
        "    last = None\n    for _ in range(attempts):\n        try:\n            return await op()\n"
        "        except Exception as e:\n            last = e\n    raise last\n",
        "    return await op()\n",
    ),
    # what the candidate's call does to the process state, seen by the test
    "an environment variable the candidate's call sets": (
        'import os\n\n\ndef use_mode(m):\n    """set the APP_MODE environment variable to m"""\n',
        "import os\ndef check(candidate):\n    candidate('fast')\n    assert os.environ['APP_MODE'] == 'fast'\n",
        "use_mode",
        "    os.environ['APP_MODE'] = m\n",
        "    os.environ['APP_MODE'] = m.upper()\n",
    ),
    "an environment variable the test set and the candidate's call removes": (
        'import os\n\n\ndef drop(name):\n    """remove the environment variable name"""\n',
        "import os\ndef check(candidate):\n    os.environ['APP_X'] = '1'\n"
        "    candidate('APP_X')\n    assert 'APP_X' not in os.environ\n",
        "drop",
        "    os.environ.pop(name, None)\n",
        "    os.environ[name] = ''\n",
    ),
    "the environment a candidate's call must leave unchanged": (
        'import os\n\n\ndef env_with(extra):\n    """a copy of os.environ with extra added; os.environ unchanged"""\n',
        "import os\ndef check(candidate):\n    env = candidate({'XTRA': '1'})\n"
        "    assert env['XTRA'] == '1' and 'XTRA' not in os.environ\n",
        "env_with",
        "    return {**os.environ, **extra}\n",
        "    os.environ.update(extra)\n    return dict(os.environ)\n",
    ),
    "the working directory a candidate's call must leave as it was": (
        'import os\n\n\ndef list_dir(d):\n    """sorted names in directory d; the working directory unchanged"""\n',
        _d(
            """
            import os, tempfile
            def check(candidate):
                d = tempfile.mkdtemp()
                open(os.path.join(d, 'a'), 'w').close()
                before = os.getcwd()
                assert candidate(d) == ['a'] and os.getcwd() == before
            """
        ),
        "list_dir",
        "    return sorted(os.listdir(d))\n",
        "    os.chdir(d)\n    return sorted(os.listdir('.'))\n",
    ),
    "the decimal context a candidate's call must leave as it was": (
        "from decimal import Decimal, getcontext, localcontext\n\n\n"
        'def ratio(a, b, digits):\n    """Decimal(a) / Decimal(b) to digits significant digits; the context unchanged"""\n',
        "from decimal import Decimal, getcontext\ndef check(candidate):\n"
        "    assert candidate(1, 3, 4) == Decimal('0.3333') and getcontext().prec == 28\n",
        "ratio",
        "    with localcontext() as c:\n        c.prec = digits\n        return Decimal(a) / Decimal(b)\n",
        "    getcontext().prec = digits\n    return Decimal(a) / Decimal(b)\n",
    ),
    "the recursion limit a candidate's call must put back": (
        'import sys\n\n\ndef deep(n):\n    """n by recursion n deep (raise the limit for it, then put it back)"""\n',
        "import sys\ndef check(candidate):\n    before = sys.getrecursionlimit()\n"
        "    assert candidate(3000) == 3000 and sys.getrecursionlimit() == before\n",
        "deep",
        "    old = sys.getrecursionlimit()\n    sys.setrecursionlimit(n + 100)\n    try:\n"
        "        f = lambda k: 0 if k == 0 else 1 + f(k - 1)\n        return f(n)\n"
        "    finally:\n        sys.setrecursionlimit(old)\n",
        "    sys.setrecursionlimit(n + 100)\n    f = lambda k: 0 if k == 0 else 1 + f(k - 1)\n    return f(n)\n",
    ),
    "the umask a candidate's call must put back": (
        'import os\n\n\ndef private_file(path):\n    """create path with mode 0600 via umask 077; the umask put back"""\n',
        _d(
            """
            import os, stat
            def check(candidate):
                before = os.umask(0o022)
                os.umask(before)
                candidate('secret.txt')
                assert stat.S_IMODE(os.stat('secret.txt').st_mode) == 0o600
                now = os.umask(before)
                assert now == before, oct(now)
            """
        ),
        "private_file",
        "    old = os.umask(0o077)\n    try:\n        open(path, 'w').close()\n    finally:\n        os.umask(old)\n",
        "    os.umask(0o077)\n    open(path, 'w').close()\n",
    ),
    "the test's coroutines awaited by the candidate's tasks at once": (
        _MAP_ASYNC,
        _QUEUE_TEST,
        "map_async",
        "    return list(await asyncio.gather(*(fn(x) for x in xs)))\n",
        "    done = asyncio.Queue()\n    async def one(x):\n        await done.put(await fn(x))\n"
        "    await asyncio.gather(*(one(x) for x in xs))\n"
        "    return [done.get_nowait() for _ in xs]\n",
    ),
}


# name: (prompt, test, entry, answer, strict status, official status, strict reason)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "a umask the candidate's call leaves open to others": (
        'import os\n\n\ndef open_umask():\n    """set the umask to 0 (and leave it)"""\n',
        "import os\ndef check(candidate):\n    candidate()\n    assert os.umask(0) == 0\n",
        "open_umask",
        "    os.umask(0)\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code set the umask to 0o0",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("world"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_the_tests_world_reaches_the_candidate_as_in_one_program(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_where_the_world_cannot_be_shared_the_reason_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
