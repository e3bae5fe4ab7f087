"""Shapes of a company's own HumanEval-format set, judged as the single
program judges them: ClassEval-style class skeletons the completion fills
(comparisons, hashing, ordering, membership), enums the prompt defines
(a ``Flag``), classes the test derives from, coroutines the test runs with
``asyncio``, unittest-style tests.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`). ``LIMITS`` are
where strict scoring cannot answer as the single program would: it fails
the answer with the reason docs/strict-scoring.md names, never a bare
``AssertionError`` or a ``TypeError`` of its own."""

from __future__ import annotations

import pytest
from test_faithful import judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_MONEY = (
    "class Money:\n"
    '    """An amount in cents."""\n\n'
    "    def __init__(self, cents):\n"
    '        """Keep cents."""\n\n'
    "    def __eq__(self, other):\n"
    '        """Equal amounts."""\n\n'
    "    def __hash__(self):\n"
    '        """Hash of the amount."""\n\n'
    "    def __lt__(self, other):\n"
    '        """Smaller amount."""\n\n\n'
)
_MONEY_DONE = (
    "class Money:\n"
    "    def __init__(self, cents):\n"
    "        self.cents = cents\n"
    "    def __eq__(self, other):\n"
    "        return isinstance(other, Money) and self.cents == other.cents\n"
    "    def __hash__(self):\n"
    "        return hash(self.cents)\n"
    "    def __lt__(self, other):\n"
    "        return self.cents < other.cents\n\n\n"
)
_STACK = (
    "class Stack:\n"
    '    """A stack."""\n\n'
    "    def __init__(self):\n"
    "        pass\n\n"
    "    def push(self, x):\n"
    "        pass\n\n"
    "    def pop(self):\n"
    "        raise NotImplementedError\n\n"
    "    def __len__(self):\n"
    "        ...\n\n\n"
)
_STACK_DONE = (
    "class Stack:\n"
    "    def __init__(self):\n"
    "        self.items = []\n"
    "    def push(self, x):\n"
    "        self.items.append(x)\n"
    "    def pop(self):\n"
    "        return self.items.pop()\n"
    "    def __len__(self):\n"
    "        return len(self.items)\n\n\n"
)
_PERM = (
    "import enum\n\n\n"
    "class Perm(enum.Flag):\n"
    "    R = 4\n"
    "    W = 2\n"
    "    X = 1\n\n\n"
    "def parse(mode):\n"
    '    """\'rw-\' -> Perm.R | Perm.W; \'---\' -> Perm(0)"""\n'
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a class skeleton the completion fills, used through its methods": (
        _STACK + 'def make():\n    """an empty Stack"""\n',
        "def check(candidate):\n    s = Stack()\n    s.push(1)\n    s.push(2)\n"
        "    assert len(s) == 2 and s.pop() == 2\n    t = candidate()\n    t.push(5)\n"
        "    assert t.pop() == 5 and len(t) == 0\n",
        "make",
        "    return Stack()\n\n\n" + _STACK_DONE,
        "    s = Stack()\n    s.push(0)\n    return s\n\n\n" + _STACK_DONE,
    ),
    "a class skeleton the completion fills, unittest-style": (
        _STACK + 'def make():\n    """an empty Stack"""\n',
        "import unittest\n\n\nclass TestStack(unittest.TestCase):\n"
        "    def test_push_pop(self):\n        s = make()\n        s.push('a')\n"
        "        self.assertEqual(s.pop(), 'a')\n        self.assertEqual(len(s), 0)\n\n\n"
        "def check(candidate):\n    result = unittest.TextTestRunner(stream=open('/dev/null', 'w'))"
        ".run(unittest.defaultTestLoader.loadTestsFromTestCase(TestStack))\n"
        "    assert result.wasSuccessful()\n",
        "make",
        "    return Stack()\n\n\n" + _STACK_DONE,
        "    s = Stack()\n    s.push(None)\n    return s\n\n\n" + _STACK_DONE,
    ),
    "a Flag enum the prompt defines, and its empty value": (
        _PERM,
        "def check(candidate):\n    assert Perm(0) == Perm(0)\n    assert not candidate('---')\n"
        "    assert candidate('rw-') == Perm.R | Perm.W\n    assert candidate('r--') == Perm.R\n"
        "    assert Perm.W in candidate('rwx')\n",
        "parse",
        "    p = Perm(0)\n    for c, f in zip(mode, (Perm.R, Perm.W, Perm.X)):\n"
        "        if c != '-':\n            p |= f\n    return p\n",
        "    return Perm.R\n",
    ),
    "asyncio.run of the candidate's coroutine": (
        'import asyncio\n\n\nasync def double(x):\n    """2 * x, after a short sleep"""\n',
        "import asyncio\ndef check(candidate):\n    assert asyncio.run(candidate(21)) == 42\n",
        "double",
        "    await asyncio.sleep(0.001)\n    return 2 * x\n",
        "    await asyncio.sleep(0)\n    return x\n",
    ),
    "the candidate's coroutines awaited in the test's own": (
        'import asyncio\n\n\nasync def square(x):\n    """x * x"""\n',
        "import asyncio\ndef check(candidate):\n    async def main():\n"
        "        one = await candidate(3)\n        rest = await asyncio.gather(candidate(1), candidate(2))\n"
        "        return [one, *rest]\n    assert asyncio.run(main()) == [9, 1, 4]\n",
        "square",
        "    return x * x\n",
        "    return x + x\n",
    ),
    "an exception the candidate's coroutine raises": (
        'async def parse(s):\n    """int(s); ValueError propagates"""\n',
        "import asyncio\ndef check(candidate):\n    try:\n        asyncio.run(candidate('x'))\n"
        "    except ValueError:\n        pass\n    else:\n        raise AssertionError\n"
        "    assert asyncio.run(candidate('7')) == 7\n",
        "parse",
        "    return int(s)\n",
        "    return 7\n",
    ),
    # the test's process state, read by the candidate
    "an environment variable the test sets": (
        'def mode():\n    """the APP_MODE environment variable, default dev"""\n',
        "import os\ndef check(candidate):\n    assert candidate() == 'dev'\n"
        "    os.environ['APP_MODE'] = 'prod'\n    assert candidate() == 'prod'\n"
        "    del os.environ['APP_MODE']\n    assert candidate() == 'dev'\n",
        "mode",
        "    import os\n    return os.environ.get('APP_MODE', 'dev')\n",
        "    import os\n    return os.getenv('APP_MODE') or 'prod'\n",
    ),
    "the decimal context the test sets at module level": (
        'from decimal import Decimal\n\n\ndef third(x):\n    """Decimal(x) / 3"""\n',
        "import decimal\ndecimal.getcontext().prec = 6\n\n\ndef check(candidate):\n"
        "    assert str(candidate(1)) == '0.333333'\n",
        "third",
        "    return Decimal(x) / 3\n",
        "    return Decimal(x) / Decimal(3.0001)\n",
    ),
    "a decimal rounding the test sets in a local context": (
        'from decimal import Decimal\n\n\ndef cents(x):\n    """x rounded to cents"""\n',
        "import decimal\ndef check(candidate):\n    with decimal.localcontext() as ctx:\n"
        "        ctx.rounding = decimal.ROUND_DOWN\n        assert candidate('2.679') == decimal.Decimal('2.67')\n"
        "    assert candidate('2.675') == decimal.Decimal('2.68')\n",
        "cents",
        "    return Decimal(x).quantize(Decimal('0.01'))\n",
        "    return Decimal(x).quantize(Decimal('0.01'), rounding='ROUND_HALF_EVEN')\n",
    ),
    "the int digit limit the test raises": (
        'def digits(n):\n    """the number of decimal digits of 10 ** n"""\n',
        "import sys\nsys.set_int_max_str_digits(100_000)\n\n\ndef check(candidate):\n"
        "    assert candidate(20_000) == 20_001\n",
        "digits",
        "    return len(str(10 ** n))\n",
        "    return n\n",
    ),
    "the recursion limit the test raises": (
        'def depth(n):\n    """n, counted by recursion"""\n',
        "import sys\nsys.setrecursionlimit(5000)\n\n\ndef check(candidate):\n"
        "    assert candidate(3000) == 3000\n",
        "depth",
        "    return 0 if n == 0 else 1 + depth(n - 1)\n",
        "    return 0 if n <= 1 else 1 + depth(n - 1)\n",
    ),
    "a module function the test patches with mock.patch": (
        'import time\n\n\ndef stamp(name):\n    """name + "@" + str(int(time.time()))"""\n',
        "from unittest import mock\ndef check(candidate):\n"
        "    with mock.patch('time.time', return_value=1700000000.5) as clock:\n"
        "        assert candidate('job') == 'job@1700000000'\n    clock.assert_called_once_with()\n"
        "    assert candidate('x') != 'x@1700000000'\n",
        "stamp",
        "    return name + '@' + str(int(time.time()))\n",
        "    return name + '@' + str(time.time())\n",
    ),
    "a patch decorator, unittest-style, and the calls it records": (
        'import os\n\n\ndef ensure(path):\n    """False if path exists, else create the directory and return True"""\n',
        "import unittest\nfrom unittest import mock\n\n\nclass T(unittest.TestCase):\n"
        "    @mock.patch('os.makedirs')\n    @mock.patch('os.path.exists', return_value=False)\n"
        "    def test_creates(self, exists, makedirs):\n        self.assertTrue(ensure('/data/x'))\n"
        "        makedirs.assert_called_once_with('/data/x')\n\n"
        "    @mock.patch('os.path.exists', return_value=True)\n    def test_skips(self, exists):\n"
        "        self.assertFalse(ensure('/data/x'))\n\n\n"
        "def check(candidate):\n    r = unittest.TextTestRunner(stream=open('/dev/null', 'w'))"
        ".run(unittest.defaultTestLoader.loadTestsFromTestCase(T))\n    assert r.wasSuccessful(), r.failures + r.errors\n",
        "ensure",
        "    if os.path.exists(path):\n        return False\n    os.makedirs(path)\n    return True\n",
        "    if os.path.exists(path):\n        return False\n    os.makedirs(path, exist_ok=True)\n    return True\n",
    ),
    "builtins.input patched by the test": (
        'def ask():\n    """int(input()) * 2"""\n',
        "from unittest import mock\ndef check(candidate):\n"
        "    with mock.patch('builtins.input', return_value='21'):\n        assert candidate() == 42\n",
        "ask",
        "    return int(input()) * 2\n",
        "    return int(input()) + 2\n",
    ),
    "an environment the test sets with mock.patch.dict": (
        'import os\n\n\ndef workers():\n    """int(WORKERS), default 1"""\n',
        "import os\nfrom unittest import mock\ndef check(candidate):\n"
        "    with mock.patch.dict(os.environ, {'WORKERS': '8'}):\n        assert candidate() == 8\n"
        "    assert candidate() == 1\n",
        "workers",
        "    return int(os.environ.get('WORKERS', '1'))\n",
        "    return int(os.environ.get('WORKERS', '8'))\n",
    ),
    "log records the test captures with assertLogs": (
        'import logging\n\nlog = logging.getLogger("billing")\n\n\n'
        'def charge(amount):\n    """log INFO "charged N"; a negative amount logs an ERROR and returns False"""\n',
        "import logging, unittest\n\n\nclass T(unittest.TestCase):\n    def test_logs(self):\n"
        "        with self.assertLogs('billing', level='INFO') as cm:\n            self.assertTrue(charge(5))\n"
        "            self.assertFalse(charge(-1))\n"
        "        self.assertEqual(cm.output, ['INFO:billing:charged 5', 'ERROR:billing:refused -1'])\n\n\n"
        "def check(candidate):\n    r = unittest.TextTestRunner(stream=open('/dev/null', 'w'))"
        ".run(unittest.defaultTestLoader.loadTestsFromTestCase(T))\n    assert r.wasSuccessful(), r.failures + r.errors\n",
        "charge",
        "    if amount < 0:\n        log.error('refused %d', amount)\n        return False\n"
        "    log.info('charged %d', amount)\n    return True\n",
        "    if amount < 0:\n        log.warning('refused %d', amount)\n        return False\n"
        "    log.info('charged %d', amount)\n    return True\n",
    ),
    "a warning logged to the root logger, seen by a handler the test adds": (
        'import logging\n\n\ndef parse(s):\n    """int(s); on failure log a warning and return 0"""\n',
        "import logging\n\n\nclass Keep(logging.Handler):\n    def __init__(self):\n"
        "        super().__init__()\n        self.seen = []\n    def emit(self, record):\n"
        "        self.seen.append((record.levelname, record.getMessage()))\n\n\n"
        "def check(candidate):\n    keep = Keep()\n    logging.getLogger().addHandler(keep)\n"
        "    assert candidate('x') == 0 and candidate('4') == 4\n"
        "    assert len(keep.seen) == 1 and keep.seen[0][0] == 'WARNING'\n",
        "parse",
        "    try:\n        return int(s)\n    except ValueError:\n"
        "        logging.warning('bad number %r', s)\n        return 0\n",
        "    try:\n        return int(s)\n    except ValueError:\n        return 0\n",
    ),
    "a 2,000-node linked list built and read by the prompt's helpers": (
        "class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n"
        "        self.next = next\n\n\ndef build(vals):\n    head = None\n"
        "    for v in reversed(vals):\n        head = ListNode(v, head)\n    return head\n\n\n"
        "def to_list(head):\n    out = []\n    while head:\n        out.append(head.val)\n"
        '        head = head.next\n    return out\n\n\ndef reverse(head):\n    """reversed"""\n',
        "def check(candidate):\n    assert to_list(candidate(build([1, 2, 3]))) == [3, 2, 1]\n"
        "    assert to_list(candidate(build(list(range(2000))))) == list(range(2000))[::-1]\n",
        "reverse",
        "    prev = None\n    while head:\n        head.next, prev, head = prev, head, head.next\n"
        "    return prev\n",
        "    return head\n",
    ),
    # standard values
    "an aware datetime in an IANA zone, both ways": (
        "from datetime import datetime\nfrom zoneinfo import ZoneInfo\n\n\n"
        'def to_paris(dt):\n    """dt in Europe/Paris"""\n',
        "from datetime import datetime, timezone\nfrom zoneinfo import ZoneInfo\n\n\n"
        "def check(candidate):\n    got = candidate(datetime(2024, 7, 1, 12, tzinfo=timezone.utc))\n"
        "    assert got == datetime(2024, 7, 1, 14, tzinfo=ZoneInfo('Europe/Paris'))\n"
        "    assert got.tzinfo is ZoneInfo('Europe/Paris') and got.utcoffset().seconds == 7200\n"
        "    assert candidate(datetime(2024, 1, 1, tzinfo=ZoneInfo('Asia/Tokyo'))).hour == 16\n",
        "to_paris",
        "    return dt.astimezone(ZoneInfo('Europe/Paris'))\n",
        "    return dt.replace(tzinfo=ZoneInfo('Europe/Paris'))\n",
    ),
    "pathlib paths, both ways": (
        'from pathlib import Path\n\n\ndef config_path(root, name):\n    """root / "conf" / (name + ".toml")"""\n',
        "from pathlib import Path, PurePosixPath\ndef check(candidate):\n"
        "    got = candidate(Path('/srv/app'), 'main')\n    assert got == Path('/srv/app/conf/main.toml')\n"
        "    assert isinstance(got, Path) and got.suffix == '.toml'\n"
        "    assert candidate(PurePosixPath('a'), 'b') == PurePosixPath('a/conf/b.toml')\n"
        "    assert candidate('/srv', 'x') == Path('/srv/conf/x.toml')\n",
        "config_path",
        "    return type(root)(root) / 'conf' / (name + '.toml') if not isinstance(root, str) "
        "else Path(root) / 'conf' / (name + '.toml')\n",
        "    return Path(root) / (name + '.toml')\n",
    ),
    "a UUID and an IP address as values": (
        'import uuid\n\n\ndef tag(host, ns):\n    """uuid5(ns, str(host)) and host"""\n',
        "import ipaddress, uuid\ndef check(candidate):\n    h = ipaddress.ip_address('10.1.2.3')\n"
        "    u, back = candidate(h, uuid.NAMESPACE_DNS)\n"
        "    assert u == uuid.uuid5(uuid.NAMESPACE_DNS, '10.1.2.3') and back == h\n",
        "tag",
        "    return uuid.uuid5(ns, str(host)), host\n",
        "    return uuid.uuid4(), host\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, strict reason)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "a set whose __contains__ differs from its iteration": (
        'class CISet:\n    pass\n\n\ndef words(xs):\n    """a set of xs that ignores case"""\n',
        "def check(candidate):\n    s = candidate(['Apple'])\n    assert 'apple' in s\n",
        "words",
        "    return _CI(xs)\n\n\nclass _CI:\n    def __init__(self, xs):\n        self.xs = list(xs)\n"
        "    def __iter__(self):\n        return iter(self.xs)\n"
        "    def __contains__(self, x):\n        return x.lower() in {y.lower() for y in self.xs}\n",
        "failed",
        "passed",
        "strict scoring: the test asked for 'in' of a _CI object",
    ),
    "a class with __contains__ and no __iter__": (
        'def evens():\n    """an object that contains the even ints"""\n',
        "def check(candidate):\n    assert 4 in candidate() and 3 not in candidate()\n",
        "evens",
        "    class Evens:\n        def __contains__(self, x):\n            return x % 2 == 0\n"
        "    return Evens()\n",
        "failed",
        "passed",
        "strict scoring: the test asked for 'in' of a evens.<locals>.Evens object",
    ),
    "a skeleton's __contains__ the completion fills, with no __iter__": (
        'class Evens:\n    def __contains__(self, x):\n        """x is an even int"""\n\n\n'
        'def evens():\n    """an Evens"""\n',
        "def check(candidate):\n    assert 4 in candidate() and 3 not in candidate()\n",
        "evens",
        "    return Evens()\n\n\nclass Evens:\n    def __contains__(self, x):\n"
        "        return x % 2 == 0\n",
        "failed",
        "passed",
        "strict scoring: the test asked for 'in' of a Evens object",
    ),
    "a skeleton's __eq__ the completion fills": (
        _MONEY + 'def total(xs):\n    """Money of the sum of the cents"""\n',
        "def check(candidate):\n    assert candidate([Money(1), Money(2)]) == Money(3)\n",
        "total",
        "    return Money(sum(x.cents for x in xs))\n\n\n" + _MONEY_DONE,
        "failed",
        "passed",
        "strict scoring: the test asked for == of a Money object",
    ),
    "a skeleton's __eq__ under a unittest runner, which catches the refusal": (
        _MONEY + 'def total(xs):\n    """Money of the sum of the cents"""\n',
        "import io, unittest\n\n\ndef check(candidate):\n"
        "    class T(unittest.TestCase):\n"
        "        def test_total(self):\n"
        "            self.assertEqual(candidate([Money(1), Money(2)]), Money(3))\n"
        "    suite = unittest.defaultTestLoader.loadTestsFromTestCase(T)\n"
        "    got = unittest.TextTestRunner(stream=io.StringIO()).run(suite)\n"
        "    assert got.wasSuccessful(), got.errors + got.failures\n",
        "total",
        "    return Money(sum(x.cents for x in xs))\n\n\n" + _MONEY_DONE,
        "failed",
        "passed",
        "strict scoring: the test asked for == of a Money object",
    ),
    "a skeleton's __hash__ the completion fills": (
        _MONEY + 'def unique(xs):\n    """distinct amounts"""\n',
        "def check(candidate):\n    assert len(set(candidate([Money(1), Money(1)]))) == 1\n",
        "unique",
        "    return list({x.cents: x for x in xs}.values())\n\n\n" + _MONEY_DONE,
        "failed",
        "passed",
        "strict scoring: the test asked for hash() of a Money object",
    ),
    "a skeleton's __lt__ the completion fills": (
        _MONEY + 'def cheapest(xs):\n    """the smallest amount"""\n',
        "def check(candidate):\n    xs = [Money(3), Money(1)]\n    assert sorted(xs)[0] is xs[1]\n"
        "    assert candidate(xs).cents == 1\n",
        "cheapest",
        "    return min(xs)\n\n\n" + _MONEY_DONE,
        "failed",
        "passed",
        "strict scoring: the test asked for lt of a Money object",
    ),
    "the test derives a class from the candidate's": (
        _STACK + 'def make():\n    """an empty Stack"""\n',
        "def check(candidate):\n    class Counted(Stack):\n        pass\n"
        "    s = Counted()\n    s.push(1)\n    assert s.pop() == 1\n",
        "make",
        "    return Stack()\n\n\n" + _STACK_DONE,
        "failed",
        "passed",
        "strict scoring: the test derives a class from the candidate's Stack",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("company"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_company_shapes_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_company_limits_carry_their_reason(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
