"""Values at the edges of the call channel, judged as the single program
judges them: the same NaN object seen twice, strings that hold lone
surrogates (which UTF-8 cannot carry), arguments changed by a call that then
raised, OrderedDicts (their own order, not the dict's underneath); and the
limits of the two-process model that differential testing found
(docs/strict-scoring.md). Beside them, the ordinary values a test judges:
identity and aliasing (``is``, one list twice, aliased rows), numbers at
their edges (negative zero, infinities, numpy scalars, bool against int),
bytes, keys and hashes, builtin classes passed and returned as values, and
results the test serialises, formats or changes.

Each shape is a HumanEval-format problem with a right and a wrong answer,
scored in one strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import msgspec
import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.sandbox import protocol
from aioeval.sandbox.values import wire
from aioeval.types import CandidateResult

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a 1000 x 1000 grid the test passes": (
        'def total(grid):\n    """sum of all cells"""\n',
        "def check(candidate):\n    assert candidate([[1] * 1000 for _ in range(1000)]) == 10**6\n",
        "total",
        "    return sum(map(sum, grid))\n",
        "    return len(grid)\n",
    ),
    "a 1000 x 1000 grid the candidate returns": (
        'def ones(n):\n    """an n x n grid of ones"""\n',
        "def check(candidate):\n    g = candidate(1000)\n    assert all(r == [1] * 1000 for r in g)\n",
        "ones",
        "    return [[1] * n for _ in range(n)]\n",
        "    return [[1] * n for _ in range(n - 1)] + [[0] * n]\n",
    ),
    "the same NaN comes back in a copy": (
        'def keep(xs):\n    """a copy of xs"""\n',
        "import math\n\n\ndef check(candidate):\n    assert candidate([1, math.nan]) == [1, math.nan]\n",
        "keep",
        "    return list(xs)\n",
        "    return xs[:1]\n",
    ),
    "one NaN twice, deduplicated by a set": (
        'def uniq(xs):\n    """distinct items, first-seen order"""\n',
        "import math\n\n\ndef check(candidate):\n    assert candidate([math.nan, math.nan, 1]) == [math.nan, 1]\n",
        "uniq",
        "    seen, out = set(), []\n    for x in xs:\n        if x not in seen:\n            seen.add(x)\n            out.append(x)\n    return out\n",
        "    return xs\n",
    ),
    "one NaN twice in the arguments": (
        'def same(a, b):\n    """a is b"""\n',
        "import math\n\n\ndef check(candidate):\n    assert candidate(math.nan, math.nan) is True\n    assert candidate(math.nan, float('nan')) is False\n",
        "same",
        "    return a is b\n",
        "    return a == b or (a != a and b != b)\n",
    ),
    "the test's NaN written back into its list": (
        'def dup_last(xs):\n    """append xs[-1] to xs in place"""\n',
        "import math\n\n\ndef check(candidate):\n    xs = [1.0, math.nan]\n    candidate(xs)\n    assert xs == [1.0, math.nan, math.nan] and xs[2] is math.nan\n",
        "dup_last",
        "    xs.append(xs[-1])\n",
        "    xs.append(float('nan'))\n",
    ),
    "a fresh NaN repeated is one object": (
        'def nans(n):\n    """[nan] * n"""\n',
        "def check(candidate):\n    r = candidate(2)\n    assert r[0] != r[0] and r[0] is r[1]\n",
        "nans",
        "    return [float('nan')] * n\n",
        "    return [float('nan'), float('nan')][:n]\n",
    ),
    "a lone surrogate as an argument": (
        'def count_surrogates(s):\n    """how many code points of s are in U+D800..U+DFFF"""\n',
        "def check(candidate):\n    assert candidate('a\\ud800b') == 1\n    assert candidate('ab') == 0\n",
        "count_surrogates",
        "    return sum(0xD800 <= ord(c) <= 0xDFFF for c in s)\n",
        "    return 0\n",
    ),
    "UTF-16 code units as the answer": (
        'def units(s):\n    """the UTF-16 code units of s, each as a one-character string"""\n',
        "def check(candidate):\n    assert candidate('a\\U0001F600') == ['a', '\\ud83d', '\\ude00']\n",
        "units",
        "    out = []\n    for c in s:\n        o = ord(c)\n        if o > 0xFFFF:\n"
        "            o -= 0x10000\n            out += [chr(0xD800 + (o >> 10)), chr(0xDC00 + (o & 0x3FF))]\n"
        "        else:\n            out.append(c)\n    return out\n",
        "    return list(s)\n",
    ),
    "lone surrogates in dict keys and values": (
        'def inv(d):\n    """{v: k}"""\n',
        "def check(candidate):\n    assert candidate({'\\ud800': 'a', 'b': '\\udfff'}) == {'a': '\\ud800', '\\udfff': 'b'}\n",
        "inv",
        "    return {v: k for k, v in d.items()}\n",
        "    return dict(d)\n",
    ),
    "a lone surrogate written back, raised and passed to a callback": (
        'def add(xs, f):\n    """append U+DC80 to xs in place, then raise ValueError(f(xs[-1]))"""\n',
        _d(
            """
            def check(candidate):
                xs = ['a']
                try:
                    candidate(xs, lambda s: s + '\\udfff')
                except ValueError as e:
                    assert e.args == ('\\udc80\\udfff',)
                else:
                    assert False
                assert xs == ['a', '\\udc80']
            """
        ),
        "add",
        "    xs.append('\\udc80')\n    raise ValueError(f(xs[-1]))\n",
        "    xs.append('\\u00dc')\n    raise ValueError(f(xs[-1]))\n",
    ),
    "a lone surrogate printed, captured by the test": (
        'def show(s):\n    """print s"""\n',
        _d(
            """
            import io, contextlib
            def check(candidate):
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    assert candidate('\\ud800') is None
                assert buf.getvalue()
            """
        ),
        "show",
        "    print(s)\n",
        "    return 1\n",
    ),
    "an argument changed before the candidate raised": (
        'def lower_all(xs):\n    """lowercase xs in place; ValueError(xs) at the first non-string"""\n',
        _d(
            """
            def check(candidate):
                xs = ['A', 'B', 1, 'C']
                try:
                    candidate(xs)
                except ValueError as e:
                    assert e.args == (['a', 'b', 1, 'C'],)
                else:
                    assert False
                assert xs == ['a', 'b', 1, 'C']
            """
        ),
        "lower_all",
        "    for i, x in enumerate(xs):\n        if not isinstance(x, str):\n            raise ValueError(xs)\n        xs[i] = x.lower()\n",
        "    if not all(isinstance(x, str) for x in xs):\n        raise ValueError(xs)\n    xs[:] = [x.lower() for x in xs]\n",
    ),
    "an argument changed before the test's callback raised": (
        'def safe(f, xs):\n    """f(xs), ignoring a ValueError; then xs"""\n',
        _d(
            """
            def check(candidate):
                def f(ys):
                    ys.append(1)
                    raise ValueError
                assert candidate(f, []) == [1]
            """
        ),
        "safe",
        "    try:\n        f(xs)\n    except ValueError:\n        pass\n    return xs\n",
        "    try:\n        f(list(xs))\n    except ValueError:\n        pass\n    return xs\n",
    ),
    "an OrderedDict returned": (
        'from collections import OrderedDict\n\n\ndef firsts(words):\n    """OrderedDict of first letter -> word, first-seen order"""\n',
        "from collections import OrderedDict\ndef check(candidate):\n    d = candidate(['bob', 'al', 'bea'])\n    assert d == OrderedDict([('b', 'bob'), ('a', 'al')]) and list(d) == ['b', 'a']\n",
        "firsts",
        "    d = OrderedDict()\n    for w in words:\n        d.setdefault(w[0], w)\n    return d\n",
        "    d = OrderedDict()\n    for w in words:\n        d[w[0]] = w\n    return d\n",
    ),
    "an OrderedDict after move_to_end, returned": (
        'from collections import OrderedDict\n\n\ndef touch(keys, k):\n    """OrderedDict of keys (value 0), with k moved to the end"""\n',
        "def check(candidate):\n    assert list(candidate('abc', 'a')) == ['b', 'c', 'a']\n",
        "touch",
        "    d = OrderedDict.fromkeys(keys, 0)\n    d.move_to_end(k)\n    return d\n",
        "    d = OrderedDict.fromkeys(keys, 0)\n    return d\n",
    ),
    "the test's OrderedDict changed in place": (
        'def lru_get(cache, k):\n    """cache[k], moving k to the end (most recent); None if missing"""\n',
        "from collections import OrderedDict\ndef check(candidate):\n    c = OrderedDict([(1, 'a'), (2, 'b'), (3, 'c')])\n    assert candidate(c, 1) == 'a' and list(c) == [2, 3, 1]\n    assert candidate(c, 9) is None and list(c) == [2, 3, 1]\n",
        "lru_get",
        "    if k not in cache:\n        return None\n    cache.move_to_end(k)\n    return cache[k]\n",
        "    return cache.get(k)\n",
    ),
    "the test's OrderedDict grows": (
        'def put(cache, k, v, cap):\n    """LRU put: insert, evicting the oldest past cap"""\n',
        "from collections import OrderedDict\ndef check(candidate):\n    c = OrderedDict()\n    for k in 'abcd':\n        candidate(c, k, k.upper(), 3)\n    assert c == OrderedDict([('b', 'B'), ('c', 'C'), ('d', 'D')])\n",
        "put",
        "    cache[k] = v\n    cache.move_to_end(k)\n    if len(cache) > cap:\n        cache.popitem(last=False)\n",
        "    cache[k] = v\n    if len(cache) > cap:\n        cache.popitem()\n",
    ),
    "an LRU class whose cache the test reads": (
        'from collections import OrderedDict\n\n\nclass LRU:\n    """get/put with a capacity; .cache is an OrderedDict oldest first"""\n',
        "def check(candidate):\n    c = candidate(2)\n    c.put(1, 1)\n    c.put(2, 2)\n    assert c.get(1) == 1\n    assert list(c.cache) == [2, 1] and list(c.cache.items()) == [(2, 2), (1, 1)]\n",
        "LRU",
        "    def __init__(self, cap):\n        self.cap = cap\n        self.cache = OrderedDict()\n    def get(self, k):\n        if k not in self.cache:\n            return -1\n        self.cache.move_to_end(k)\n        return self.cache[k]\n    def put(self, k, v):\n        self.cache[k] = v\n        self.cache.move_to_end(k)\n        if len(self.cache) > self.cap:\n            self.cache.popitem(last=False)\n",
        "    def __init__(self, cap):\n        self.cap = cap\n        self.cache = OrderedDict()\n    def get(self, k):\n        return self.cache.get(k, -1)\n    def put(self, k, v):\n        self.cache[k] = v\n        if len(self.cache) > self.cap:\n            self.cache.popitem(last=False)\n",
    ),
    "an io.StringIO of the test's, written to": (
        'def dump(rows, out):\n    """each row tab-separated on its own line of out"""\n',
        "import io\n\n\ndef check(candidate):\n    buf = io.StringIO()\n"
        "    candidate([[1, 'a'], [2, 'b']], buf)\n    assert buf.getvalue() == '1\\ta\\n2\\tb\\n'\n",
        "dump",
        "    for r in rows:\n        print(*r, sep='\\t', file=out)\n",
        "    for r in rows:\n        out.write('\\t'.join(map(str, r)))\n",
    ),
    "a compiled regex the test passes": (
        'def matching(pattern, lines):\n    """the lines pattern.search finds a match in"""\n',
        "import re\n\n\ndef check(candidate):\n    p = re.compile(r'^err', re.I)\n"
        "    assert candidate(p, ['ERR a', 'ok', 'err b']) == ['ERR a', 'err b']\n",
        "matching",
        "    return [l for l in lines if pattern.search(l)]\n",
        "    import re\n    return [l for l in lines if re.search(pattern.pattern, l)]\n",
    ),
    "a compiled regex the candidate returns": (
        'import re\n\n\ndef word(w):\n    """a compiled pattern matching w as a whole word, any case"""\n',
        "import re\n\n\ndef check(candidate):\n    p = candidate('cat')\n"
        "    assert isinstance(p, re.Pattern) and p.flags & re.I\n"
        "    assert p.search('a CAT sat') and not p.search('concatenate')\n",
        "word",
        "    return re.compile(r'\\b' + re.escape(w) + r'\\b', re.I)\n",
        "    return re.compile(re.escape(w), re.I)\n",
    ),
    "a slice the test passes to the candidate's __getitem__": (
        'class Ring:\n    """Ring(items); ring[i] and ring[a:b] (a list) over the items"""\n',
        "def check(candidate):\n    r = candidate([1, 2, 3, 4])\n"
        "    assert r[1:3] == [2, 3] and r[::-2] == [4, 2] and r[-1] == 4\n",
        "Ring",
        "    def __init__(self, items):\n        self.items = list(items)\n"
        "    def __getitem__(self, i):\n        return self.items[i]\n",
        "    def __init__(self, items):\n        self.items = list(items)\n"
        "    def __getitem__(self, i):\n"
        "        return self.items[i] if isinstance(i, int) else self.items[i.start:i.stop]\n",
    ),
    "a slice the candidate returns": (
        'def window(n, k):\n    """the slice of the last k of n items"""\n',
        "def check(candidate):\n    s = candidate(10, 3)\n"
        "    assert s == slice(7, 10) and list(range(10))[s] == [7, 8, 9]\n",
        "window",
        "    return slice(n - k, n)\n",
        "    return slice(n - k, n, 1)\n",
    ),
    "the candidate's exception passed to the test's callback": (
        'def each(items, fn, on_error):\n    """[fn(x)] for each item; on an exception, on_error(x, exc) and skip it"""\n',
        _d(
            """
            def check(candidate):
                seen = []
                def on_error(x, exc):
                    assert isinstance(exc, ZeroDivisionError) and type(exc) is ZeroDivisionError
                    seen.append((x, str(exc), exc.args))
                assert candidate([1, 0, 5], lambda x: 10 // x, on_error) == [10, 2]
                assert seen == [(0, 'integer division or modulo by zero', ('integer division or modulo by zero',))]
            """
        ),
        "each",
        "    out = []\n    for x in items:\n        try:\n            out.append(fn(x))\n"
        "        except Exception as e:\n            on_error(x, e)\n    return out\n",
        "    out = []\n    for x in items:\n        try:\n            out.append(fn(x))\n"
        "        except Exception as e:\n            on_error(x, ValueError(str(e)))\n    return out\n",
    ),
    "the test's own exception, passed back to its callback": (
        'def retry(fn, n, on_error):\n    """fn() up to n times; on_error(i, exc) for each failure (i from 1)"""\n',
        _d(
            """
            def check(candidate):
                class Flaky(Exception):
                    pass
                errs = []
                raised = []
                def fn():
                    if len(raised) < 2:
                        raised.append(Flaky(len(raised)))
                        raise raised[-1]
                    return 'ok'
                assert candidate(fn, 5, lambda i, e: errs.append((i, e))) == 'ok'
                assert [i for i, _ in errs] == [1, 2]
                assert errs[0][1] is raised[0] and errs[1][1] is raised[1]
            """
        ),
        "retry",
        "    for i in range(1, n + 1):\n        try:\n            return fn()\n"
        "        except Exception as e:\n            on_error(i, e)\n",
        "    for i in range(n):\n        try:\n            return fn()\n"
        "        except Exception as e:\n            on_error(i, e)\n",
    ),
    "an exception the test passes as a value": (
        'def describe(exc):\n    """type name: message"""\n',
        "def check(candidate):\n    assert candidate(KeyError('k')) == \"KeyError: 'k'\"\n"
        "    assert candidate(ValueError('bad')) == 'ValueError: bad'\n",
        "describe",
        "    return f'{type(exc).__name__}: {exc}'\n",
        "    return f'{type(exc).__name__}: {exc.args[0]}'\n",
    ),
    "an exception's __cause__": (
        "class ParseError(Exception):\n    pass\n\n\n"
        'def parse(s):\n    """int(s); on failure raise ParseError from the ValueError"""\n',
        _d(
            """
            def check(candidate):
                try:
                    candidate('x')
                except ParseError as e:
                    assert isinstance(e.__cause__, ValueError) and 'x' in str(e.__cause__)
                else:
                    assert False
            """
        ),
        "parse",
        "    try:\n        return int(s)\n    except ValueError as e:\n        raise ParseError(s) from e\n",
        "    try:\n        return int(s)\n    except ValueError:\n        raise ParseError(s) from None\n",
    ),
    "a member of the prompt's Flag, compared with is": (
        "import enum\n\n\nclass Perm(enum.Flag):\n    R = 4\n    W = 2\n    X = 1\n\n\n"
        'def parse(mode):\n    """\'rw-\' -> Perm.R | Perm.W"""\n',
        "def check(candidate):\n    assert candidate('rwx') is Perm.R | Perm.W | Perm.X\n"
        "    assert candidate('r--') is Perm.R and candidate('-w-') in {Perm.W}\n"
        "    assert candidate('---') is Perm(0)\n",
        "parse",
        "    p = Perm(0)\n    for c, f in zip(mode, (Perm.R, Perm.W, Perm.X)):\n"
        "        if c != '-':\n            p |= f\n    return p\n",
        "    p = Perm(0)\n    for c, f in zip(mode, (Perm.R, Perm.W, Perm.X)):\n"
        "        if c == 'r':\n            p |= f\n    return p\n",
    ),
    "a defaultdict whose factory is the candidate's own function": (
        'from collections import defaultdict\n\n\ndef tree():\n    """an autovivifying tree: a defaultdict whose factory is tree"""\n',
        "import json\n\n\ndef check(candidate):\n    t = candidate()\n    t['a']['b']['c'] = 1\n"
        "    t['a']['x'] = 2\n    assert json.loads(json.dumps(t)) == {'a': {'b': {'c': 1}, 'x': 2}}\n",
        "tree",
        "    return defaultdict(tree)\n",
        "    return defaultdict(dict)\n",
    ),
    "a defaultdict with a lambda factory the test passes": (
        'def group(d, pairs):\n    """append each v to d[k], for (k, v) in pairs"""\n',
        "from collections import defaultdict\n\n\ndef check(candidate):\n    d = defaultdict(lambda: [])\n"
        "    candidate(d, [('a', 1), ('a', 2), ('b', 3)])\n    assert d == {'a': [1, 2], 'b': [3]}\n"
        "    assert d['z'] == [] and type(d) is defaultdict\n",
        "group",
        "    for k, v in pairs:\n        d[k].append(v)\n",
        "    for k, v in pairs:\n        d[k] = [v]\n",
    ),
    # identity and aliasing
    "is True from a membership test": (
        'def has(xs, x):\n    """x in xs"""\n',
        "def check(candidate):\n    assert candidate([1, 2], 2) is True\n    assert candidate([1], 3) is False\n",
        "has",
        "    return x in xs\n",
        "    return xs.count(x)\n",
    ),
    "is None for a missing key": (
        'def get(d, k):\n    """d[k] or None"""\n',
        "def check(candidate):\n    assert candidate({}, 'a') is None\n    assert candidate({'a': 0}, 'a') == 0\n",
        "get",
        "    return d.get(k)\n",
        "    return d.get(k, 0)\n",
    ),
    "the same element object comes back": (
        'def first(xs):\n    """xs[0]"""\n',
        "def check(candidate):\n    inner = [1]\n    xs = [inner, [2]]\n    assert candidate(xs) is inner\n",
        "first",
        "    return xs[0]\n",
        "    return list(xs[0])\n",
    ),
    "the same list twice in the result": (
        'def twice():\n    """(a, a) for one new list a"""\n',
        "def check(candidate):\n    a, b = candidate()\n    a.append(1)\n    assert b == [1] and a is b\n",
        "twice",
        "    a = []\n    return a, a\n",
        "    return [], []\n",
    ),
    "one argument passed twice": (
        'def grow(a, b):\n    """append len(b) to a"""\n',
        "def check(candidate):\n    x = [0]\n    candidate(x, x)\n    assert x == [0, 1]\n    candidate(x, x)\n    assert x == [0, 1, 2]\n",
        "grow",
        "    a.append(len(b))\n",
        "    a.append(len(b) - 1)\n",
    ),
    "aliased rows of a grid": (
        'def set_corner(g):\n    """g[0][0] = 1 in place"""\n',
        "def check(candidate):\n    g = [[0] * 2] * 2\n    candidate(g)\n    assert g == [[1, 0], [1, 0]] and g[0] is g[1]\n",
        "set_corner",
        "    g[0][0] = 1\n",
        "    g[0] = [1, 0]\n",
    ),
    "a list inside a tuple changed in place": (
        'def fill(t):\n    """append 1 to t[0] in place"""\n',
        "def check(candidate):\n    inner = []\n    t = (inner, 5)\n    candidate(t)\n    assert inner == [1] and t == ([1], 5)\n",
        "fill",
        "    t[0].append(1)\n",
        "    t = ([1], 5)\n",
    ),
    # numbers
    "isclose on a returned list": (
        'def halves(xs):\n    """x / 2 each"""\n',
        "import math\ndef check(candidate):\n    r = candidate([1, 3, 0.1])\n    assert all(math.isclose(a, b) for a, b in zip(r, [0.5, 1.5, 0.05]))\n    assert len(r) == 3\n",
        "halves",
        "    return [x / 2 for x in xs]\n",
        "    return [x // 2 for x in xs]\n",
    ),
    "negative zero": (
        'def neg(x):\n    """-x"""\n',
        "import math\ndef check(candidate):\n    r = candidate(0.0)\n    assert math.copysign(1, r) == -1 and str(r) == '-0.0'\n",
        "neg",
        "    return -x\n",
        "    return 0.0 - x\n",
    ),
    "infinity and repr of floats": (
        'def inv(x):\n    """1/x, inf at 0"""\n',
        "import math\ndef check(candidate):\n    assert candidate(0) == float('inf') and math.isinf(candidate(0))\n    assert repr(candidate(3)) == '0.3333333333333333'\n    assert str(candidate(10)) == '0.1'\n",
        "inv",
        "    return float('inf') if x == 0 else 1 / x\n",
        "    return float('inf') if x == 0 else round(1 / x, 4)\n",
    ),
    "numpy float64 result with abs": (
        'import numpy as np\n\n\ndef mean(xs):\n    """mean"""\n',
        "def check(candidate):\n    r = candidate([1, 2, 4])\n    assert abs(r - 7 / 3) < 1e-9\n    assert isinstance(r, float)\n",
        "mean",
        "    return np.mean(xs)\n",
        "    return np.median(xs)\n",
    ),
    "numpy int64 is not an int": (
        'import numpy as np\n\n\ndef total(xs):\n    """sum as a Python int"""\n',
        "def check(candidate):\n    r = candidate([1, 2])\n    assert r == 3 and isinstance(r, int)\n",
        "total",
        "    return int(np.sum(xs))\n",
        "    return np.sum(xs)\n",
    ),
    "numpy 2d array compared elementwise": (
        'import numpy as np\n\n\ndef eye(n):\n    """identity matrix"""\n',
        "import numpy as np\ndef check(candidate):\n    r = candidate(2)\n    assert (r == np.array([[1, 0], [0, 1]])).all() and r.shape == (2, 2)\n    assert r.tolist() == [[1.0, 0.0], [0.0, 1.0]]\n",
        "eye",
        "    return np.eye(n)\n",
        "    return np.ones((n, n))\n",
    ),
    "bool and int keys merge": (
        'def keys(xs):\n    """dict of x -> index, last wins"""\n',
        "def check(candidate):\n    r = candidate([1, True, 1.0])\n    assert r == {1: 2} and len(r) == 1\n    k, = r\n    assert k is 1 or k is True or k == 1\n    assert type(k) is int\n",
        "keys",
        "    return {x: i for i, x in enumerate(xs)}\n",
        "    return {x: i for i, x in enumerate(reversed(xs))}\n",
    ),
    "bool result checked with isinstance": (
        'def even(x):\n    """bool"""\n',
        "def check(candidate):\n    r = candidate(2)\n    assert isinstance(r, bool) and r == 1 and r + r == 2\n",
        "even",
        "    return x % 2 == 0\n",
        "    return 1 - x % 2\n",
    ),
    "int result type(...) == int": (
        'def count(xs):\n    """number of truthy"""\n',
        "def check(candidate):\n    r = candidate([1, 0, 2])\n    assert type(r) == int and r == 2\n",
        "count",
        "    return sum(1 for x in xs if x)\n",
        "    return sum(bool(x) for x in xs) == 2\n",
    ),
    "a big negative int and its str": (
        'def big(n):\n    """-(7 ** n)"""\n',
        "def check(candidate):\n    r = candidate(1000)\n    assert r == -(7 ** 1000) and str(r)[:4] == '-125' and r.bit_length() == (7 ** 1000).bit_length()\n",
        "big",
        "    return -(7 ** n)\n",
        "    return -(7 ** n) + 1\n",
    ),
    # bytes, keys and hashes
    "bytes vs str": (
        'def enc(s):\n    """utf-8 bytes"""\n',
        "def check(candidate):\n    r = candidate('hé')\n    assert r == b'h\\xc3\\xa9' and r != 'hé' and isinstance(r, bytes)\n",
        "enc",
        "    return s.encode()\n",
        "    return s.encode('latin-1')\n",
    ),
    "nested tuple keys": (
        'def index(pairs):\n    """{((a, b), c): i}"""\n',
        "def check(candidate):\n    r = candidate([((1, 2), 'x'), ((3, (4,)), 'y')])\n    assert r[((1, 2), 'x')] == 0 and r[((3, (4,)), 'y')] == 1\n    assert sorted(r, key=repr) == sorted(r.keys(), key=repr)\n",
        "index",
        "    return {p: i for i, p in enumerate(pairs)}\n",
        "    return {p: i + 1 for i, p in enumerate(pairs)}\n",
    ),
    "mixed tuples sorted with key=str and hashed": (
        'def pairs(n):\n    """[(i, str(i))]"""\n',
        "def check(candidate):\n    r = candidate(3)\n    assert sorted(r, key=str) == [(0, '0'), (1, '1'), (2, '2')]\n    assert hash(r[1]) == hash((1, '1'))\n    assert len(set(r)) == 3\n",
        "pairs",
        "    return [(i, str(i)) for i in range(n)]\n",
        "    return [(i, i) for i in range(n)]\n",
    ),
    "hash of a string compared": (
        'def h(s):\n    """hash(s)"""\n',
        "def check(candidate):\n    assert candidate('abc') == hash('abc')\n",
        "h",
        "    return hash(s)\n",
        "    return hash(s) + 1\n",
    ),
    "set of words listed in set order": (
        'def uniq(words):\n    """list(set(words))"""\n',
        "def check(candidate):\n    ws = ['pear', 'apple', 'fig', 'kiwi', 'plum', 'date']\n    assert candidate(ws) == list(set(ws))\n",
        "uniq",
        "    return list(set(words))\n",
        "    return sorted(set(words))\n",
    ),
    # builtin classes as values
    "a builtin type passed to isinstance": (
        'def of_type(xs, t):\n    """items of xs that are instances of t"""\n',
        "def check(candidate):\n    assert candidate([1, 'a', 2.0, 3], int) == [1, 3]\n    assert candidate([1, 'a'], str) == ['a']\n    assert candidate([1, (2,)], (list, tuple)) == [(2,)]\n",
        "of_type",
        "    return [x for x in xs if isinstance(x, t)]\n",
        "    return [x for x in xs if type(x) is not str]\n",
    ),
    "a builtin type passed and compared with is": (
        'def conv(x, t):\n    """t(x), but x itself if t is str"""\n',
        "def check(candidate):\n    assert candidate(3, str) == 3\n    assert candidate('4', int) == 4\n",
        "conv",
        "    return x if t is str else t(x)\n",
        "    return t(x)\n",
    ),
    "a builtin type returned": (
        'def kind(x):\n    """type(x)"""\n',
        "def check(candidate):\n    assert candidate(3) == int and candidate('a') is str and candidate([]).__name__ == 'list'\n    assert candidate(None) is type(None)\n    assert {candidate(1): 'i'}[int] == 'i'\n",
        "kind",
        "    return type(x)\n",
        "    return object\n",
    ),
    "the most common type's name": (
        'def kinds(xs):\n    """dict of type -> count"""\n',
        "def check(candidate):\n    assert candidate([1, 'a', 2]) == {int: 2, str: 1}\n",
        "kinds",
        "    out = {}\n    for x in xs:\n        out[type(x)] = out.get(type(x), 0) + 1\n    return out\n",
        "    return {int: len(xs)}\n",
    ),
    # other
    "json.dumps of a dict result": (
        'def d(n):\n    """{i: str(i)}"""\n',
        'import json\ndef check(candidate):\n    assert json.dumps(candidate(2), sort_keys=True) == \'{"0": "0", "1": "1"}\'\n',
        "d",
        "    return {i: str(i) for i in range(n)}\n",
        "    return {i: i for i in range(n)}\n",
    ),
    "pickle round trip of a result": (
        'def d(n):\n    """[(i, {i})]"""\n',
        "import pickle\ndef check(candidate):\n    r = candidate(2)\n    assert pickle.loads(pickle.dumps(r)) == [(0, {0}), (1, {1})]\n",
        "d",
        "    return [(i, {i}) for i in range(n)]\n",
        "    return [(i, i) for i in range(n)]\n",
    ),
    "complex results": (
        'def roots(a, b, c):\n    """both roots (complex allowed), as a sorted-by-imag tuple"""\n',
        "import cmath\ndef check(candidate):\n    r = candidate(1, 0, 1)\n    assert all(cmath.isclose(x, y) for x, y in zip(r, (-1j, 1j)))\n    assert isinstance(r[0], complex)\n",
        "roots",
        "    import cmath\n    d = cmath.sqrt(b * b - 4 * a * c)\n    return tuple(sorted(((-b - d) / (2 * a), (-b + d) / (2 * a)), key=lambda z: z.imag))\n",
        "    return (1j, -1j)\n",
    ),
    "string with NUL and all bytes": (
        'def rev(b):\n    """reversed bytes"""\n',
        "def check(candidate):\n    b = bytes(range(256))\n    assert candidate(b) == b[::-1]\n    assert candidate(b'a\\x00b') == b'b\\x00a'\n",
        "rev",
        "    return b[::-1]\n",
        "    return bytes(reversed(b.strip(b'\\x00')))\n",
    ),
    "sys.maxsize and huge float": (
        'import sys\n\n\ndef nxt(x):\n    """x + 1"""\n',
        "import sys\ndef check(candidate):\n    assert candidate(sys.maxsize) == sys.maxsize + 1 and candidate(2 ** 64) == 2 ** 64 + 1\n    assert candidate(1e308) == 1e308 and candidate(-(2 ** 63)) == -(2 ** 63) + 1\n",
        "nxt",
        "    return x + 1\n",
        "    return x + 1 if x < sys.maxsize else x\n",
    ),
    "frozenset and set of tuples": (
        'def pairs(xs):\n    """set of frozenset pairs"""\n',
        "def check(candidate):\n    r = candidate([1, 2, 3])\n    assert r == {frozenset({1, 2}), frozenset({1, 3}), frozenset({2, 3})}\n    assert frozenset({2, 1}) in r\n",
        "pairs",
        "    return {frozenset((a, b)) for i, a in enumerate(xs) for b in xs[i + 1:]}\n",
        "    return {frozenset((a, b)) for a in xs for b in xs}\n",
    ),
    "dict with float and int keys": (
        'def inv(d):\n    """{v: k}"""\n',
        "def check(candidate):\n    r = candidate({'a': 1, 'b': 1.5, 'c': -0.0})\n    assert r == {1: 'a', 1.5: 'b', 0: 'c'} and r[1.0] == 'a'\n",
        "inv",
        "    return {v: k for k, v in d.items()}\n",
        "    return {k: v for k, v in d.items()}\n",
    ),
    # more state, values and calls
    "argument left unchanged": (
        'def sorted_copy(xs):\n    """sorted copy; xs unchanged"""\n',
        "def check(candidate):\n    a = [3, 1, 2]\n    assert candidate(a) == [1, 2, 3]\n    assert a == [3, 1, 2]\n",
        "sorted_copy",
        "    return sorted(xs)\n",
        "    xs.sort()\n    return xs\n",
    ),
    "list of lists returned, then sorted by the test": (
        'def groups(xs):\n    """[[x] * x for x in xs]"""\n',
        "def check(candidate):\n    r = candidate([2, 1])\n    r.sort()\n    assert r == [[1], [2, 2]]\n    r[0].append(9)\n    assert candidate([1]) == [[1]]\n",
        "groups",
        "    return [[x] * x for x in xs]\n",
        "    return [[x] for x in xs]\n",
    ),
    "float formatting of results": (
        'def avg(xs):\n    """mean"""\n',
        "def check(candidate):\n    assert f'{candidate([1, 2]):.2f}' == '1.50' and '%.1f' % candidate([1, 1, 2]) == '1.3'\n    assert round(candidate([1, 2, 2]), 3) == 1.667 and str(candidate([0.1, 0.2])) == '0.15000000000000002'\n",
        "avg",
        "    return sum(xs) / len(xs)\n",
        "    return sum(xs) // len(xs)\n",
    ),
    "deque returned and rotated by the test": (
        'from collections import deque\n\n\ndef dq(xs):\n    """deque of xs with maxlen 3"""\n',
        "def check(candidate):\n    d = candidate([1, 2, 3, 4])\n    d.rotate(1)\n    assert list(d) == [4, 2, 3] and d.maxlen == 3\n",
        "dq",
        "    return deque(xs, maxlen=3)\n",
        "    return deque(xs)\n",
    ),
    "Decimal arithmetic by the test on a result": (
        'from decimal import Decimal\n\n\ndef price(c):\n    """Decimal cents / 100"""\n',
        "from decimal import Decimal\ndef check(candidate):\n    r = candidate(199)\n    assert r + Decimal('0.01') == Decimal('2.00') and str(r) == '1.99'\n",
        "price",
        "    return Decimal(c) / 100\n",
        "    return Decimal(c / 100)\n",
    ),
    "large list argument and result": (
        'def double(xs):\n    """2x each"""\n',
        "def check(candidate):\n    xs = list(range(500000))\n    assert candidate(xs) == [2 * x for x in xs]\n",
        "double",
        "    return [2 * x for x in xs]\n",
        "    return [2 * x for x in xs[:-1]]\n",
    ),
    "string of a million characters": (
        'def rep(s, n):\n    """s * n"""\n',
        "def check(candidate):\n    assert candidate('ab', 10 ** 6) == 'ab' * 10 ** 6\n",
        "rep",
        "    return s * n\n",
        "    return s * (n - 1)\n",
    ),
    # builtin classes passed to the candidate and returned by it
    "builtin exception classes passed for an except clause": (
        'def attempt(f, errors):\n    """f(), or None if it raises one of errors (a class or tuple)"""\n',
        "def check(candidate):\n    def bad():\n        return {}['x']\n    assert candidate(bad, (ValueError, KeyError)) is None\n    assert candidate(bad, LookupError) is None\n    try:\n        candidate(bad, ValueError)\n    except KeyError:\n        pass\n    else:\n        assert False\n",
        "attempt",
        "    try:\n        return f()\n    except errors:\n        return None\n",
        "    try:\n        return f()\n    except Exception:\n        return None\n",
    ),
    "a builtin type as a defaultdict factory": (
        'from collections import defaultdict\n\n\ndef group(pairs, factory):\n    """defaultdict(factory); d[k] += v or d[k].append(v) as fits"""\n',
        "def check(candidate):\n    d = candidate([('a', 1), ('a', 2)], list)\n    assert d['a'] == [1, 2] and d['z'] == [] and type(d).__name__ == 'defaultdict'\n    e = candidate([('a', 1), ('a', 2)], int)\n    assert e == {'a': 3} and e['q'] == 0\n",
        "group",
        "    d = defaultdict(factory)\n    for k, v in pairs:\n        if isinstance(d[k], list):\n            d[k].append(v)\n        else:\n            d[k] += v\n    return d\n",
        "    d = defaultdict(factory)\n    for k, v in pairs:\n        if isinstance(d[k], list):\n            d[k] = [v]\n        else:\n            d[k] = v\n    return d\n",
    ),
    "builtin types as converters": (
        'def convert(xs, types):\n    """[t(x) for x, t in zip(xs, types)]"""\n',
        "def check(candidate):\n    r = candidate(['1', '2.5', 3], [int, float, str])\n    assert r == [1, 2.5, '3'] and [type(v) for v in r] == [int, float, str]\n",
        "convert",
        "    return [t(x) for x, t in zip(xs, types)]\n",
        "    return [x for x, t in zip(xs, types)]\n",
    ),
    "type names of values": (
        'def names(xs):\n    """type(x).__name__ of each"""\n',
        "def check(candidate):\n    assert candidate([1, 'a', None, [], 1.0, True]) == ['int', 'str', 'NoneType', 'list', 'float', 'bool']\n",
        "names",
        "    return [type(x).__name__ for x in xs]\n",
        "    return [str(type(x)) for x in xs]\n",
    ),
    "candidate's own class returned, compared by identity": (
        'def make_class():\n    """a new class named Thing"""\n',
        "def check(candidate):\n    C = candidate()\n    assert C.__name__ == 'Thing' and isinstance(C(), C) and C is not candidate()\n",
        "make_class",
        "    class Thing:\n        pass\n    return Thing\n",
        "    class Other:\n        pass\n    return Other\n",
    ),
    "exception class returned": (
        'def err_for(code):\n    """KeyError for 1, ValueError otherwise (the class)"""\n',
        "def check(candidate):\n    assert candidate(1) is KeyError and issubclass(candidate(2), ValueError)\n    try:\n        raise candidate(1)('k')\n    except LookupError:\n        pass\n",
        "err_for",
        "    return KeyError if code == 1 else ValueError\n",
        "    return ValueError\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "a set's iteration order after it crosses": (
        'def uniq(xs):\n    """set(xs)"""\n',
        "def check(candidate):\n    assert list(candidate([9, 1, 17, 25])) == list(set([9, 1, 17, 25]))\n",
        "uniq",
        "    return set(xs)\n",
        "failed",
        "passed",
        "AssertionError",
    ),
    "a constant of the program's, read by the test": (
        'def area(r):\n    """PI * r * r; also define PI = 3.14"""\n',
        "def check(candidate):\n    assert PI == 3.14 and candidate(1) == 3.14\n",
        "area",
        "    return PI * r * r\n\n\nPI = 3.14\n",
        "failed",
        "passed",
        "NameError",
    ),
    "a helper of the program's named check, like the test's": (
        'def all_even(xs):\n    """are all items even"""\n',
        "def check(candidate):\n    assert candidate([2, 4]) is True and candidate([1]) is False\n",
        "all_even",
        "    return all(check(x) for x in xs)\n\n\ndef check(x):\n    return x % 2 == 0\n",
        "passed",
        "failed",
        "",
    ),
    "an instance of the test's int subclass, passed": (
        'def double(x):\n    """2 * x as a plain int"""\n',
        "class Cents(int):\n    pass\n\n\ndef check(candidate):\n    assert candidate(Cents(3)) == 6\n",
        "double",
        "    return int(x) * 2\n",
        "failed",
        "passed",
        "not 'Proxy'",
    ),
    "an int of more than 2**20 bits": (
        'def fact(n):\n    """n!"""\n',
        "import math\n\n\ndef check(candidate):\n    assert candidate(100000) == math.factorial(100000)\n",
        "fact",
        "    import math\n    return math.factorial(n)\n",
        "failed",
        "passed",
        "int of more than 1048576 bits",
    ),
    "a numpy array the test passes, changed in place": (
        'def zero_first(a):\n    """a[0] = 0 in place"""\n',
        "import numpy as np\ndef check(candidate):\n    a = np.array([5, 6])\n    candidate(a)\n    assert a.tolist() == [0, 6]\n",
        "zero_first",
        "    a[0] = 0\n",
        "failed",
        "passed",
        "AssertionError",
    ),
    "json.dumps of a namedtuple the candidate returns": (
        'from collections import namedtuple\nP = namedtuple("P", "x y")\n\n\ndef p(x):\n    """P(x, x + 1)"""\n',
        "import json\ndef check(candidate):\n    assert json.dumps(candidate(1)) == '[1, 2]'\n",
        "p",
        "    return P(x, x + 1)\n",
        "failed",
        "passed",
        "not JSON serializable",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("values"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_edge_values_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_documented_limits(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)


def test_a_frame_with_a_lone_surrogate_decodes_to_the_same_value() -> None:
    """Only a frame that UTF-8 cannot carry is escaped; its value trees
    decode to the strings sent, and its text arrives escaped."""
    nan = float("nan")
    value = ["t", [["l", ["a\ud800", nan]], ["d", [["\udfff", ["@", 0]]]]]]
    reply = protocol.Reply(ok=True, value=value, out="x\ud800")
    frame = protocol.encode_frame(reply)
    got = msgspec.msgpack.decode(frame[protocol.HEADER.size :], type=protocol.Reply)
    assert got.out == "x\\ud800"
    decoded = wire.Codec(lambda v: None, lambda t: None).decode(got.value)
    assert decoded[0][0] == "a\ud800" and decoded[0][1] != decoded[0][1]
    assert decoded[1] == {"\udfff": decoded[0]}
    plain = protocol.Reply(ok=True, value=["l", ["a", 1]])
    assert protocol.encode_frame(plain)[protocol.HEADER.size :] == msgspec.msgpack.encode(plain)


def test_the_same_nan_is_one_object_after_a_round_trip() -> None:
    nan = float("nan")
    sent = [nan, (nan, [nan]), {"k": nan}]
    tree = wire.Codec(lambda v: None, lambda t: None).encode(sent)
    got = wire.Codec(lambda v: None, lambda t: None).decode(tree)
    assert got[0] is got[1][0] is got[1][1][0] is got[2]["k"]
    assert got[0] != got[0] and got == [got[0], (got[0], [got[0]]), {"k": got[0]}]
