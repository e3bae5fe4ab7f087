"""The program's and the prompt's classes as values, judged as the single
program judges them: linked lists, trees and graphs of the prompt's classes
changed in place or built by the candidate, the candidate's objects read by
the test (methods, ``len``, iteration, ``str``, ``vars``, context managers),
enum members and dataclasses as keys and in sets, the test's objects
compared and sorted by the candidate.

Each shape is a HumanEval-format problem with a right and a wrong answer,
scored in one strict and one official run (`test_faithful.score_both`).
``LIMITS`` are where strict scoring still judges otherwise, each listed in
docs/strict-scoring.md with its reason."""

from __future__ import annotations

import pytest
from test_faithful import _body, _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_DATACLASS = (
    "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass P:\n    x: int\n\n\n"
    'def mk(x):\n    """P(x)"""\n'
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    # objects of the program's and the prompt's
    "linked list reversed in place, 5 nodes": (
        'class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n        self.next = next\n\n\ndef reverse(head):\n    """reverse the list"""\n',
        "def build(xs):\n    head = None\n    for x in reversed(xs):\n        head = ListNode(x, head)\n    return head\ndef walk(h):\n    out = []\n    while h:\n        out.append(h.val)\n        h = h.next\n    return out\ndef check(candidate):\n    assert walk(candidate(build(list(range(5))))) == list(range(5))[::-1]\n    assert candidate(None) is None\n",
        "reverse",
        "    prev = None\n    while head:\n        head.next, prev, head = prev, head, head.next\n    return prev\n",
        "    return head\n",
    ),
    "linked list built by the candidate, 5 nodes": (
        'class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n        self.next = next\n\n\ndef make(xs):\n    """a linked list of xs"""\n',
        "def build(xs):\n    head = None\n    for x in reversed(xs):\n        head = ListNode(x, head)\n    return head\ndef walk(h):\n    out = []\n    while h:\n        out.append(h.val)\n        h = h.next\n    return out\ndef check(candidate):\n    assert walk(candidate(list(range(5)))) == list(range(5))\n",
        "make",
        "    head = None\n    for x in reversed(xs):\n        head = ListNode(x, head)\n    return head\n",
        "    head = None\n    for x in xs:\n        head = ListNode(x, head)\n    return head\n",
    ),
    "linked list reversed in place, 300 nodes": (
        'class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n        self.next = next\n\n\ndef reverse(head):\n    """reverse the list"""\n',
        "def build(xs):\n    head = None\n    for x in reversed(xs):\n        head = ListNode(x, head)\n    return head\ndef walk(h):\n    out = []\n    while h:\n        out.append(h.val)\n        h = h.next\n    return out\ndef check(candidate):\n    assert walk(candidate(build(list(range(300))))) == list(range(300))[::-1]\n    assert candidate(None) is None\n",
        "reverse",
        "    prev = None\n    while head:\n        head.next, prev, head = prev, head, head.next\n    return prev\n",
        "    return head\n",
    ),
    "linked list built by the candidate, 300 nodes": (
        'class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n        self.next = next\n\n\ndef make(xs):\n    """a linked list of xs"""\n',
        "def build(xs):\n    head = None\n    for x in reversed(xs):\n        head = ListNode(x, head)\n    return head\ndef walk(h):\n    out = []\n    while h:\n        out.append(h.val)\n        h = h.next\n    return out\ndef check(candidate):\n    assert walk(candidate(list(range(300)))) == list(range(300))\n",
        "make",
        "    head = None\n    for x in reversed(xs):\n        head = ListNode(x, head)\n    return head\n",
        "    head = None\n    for x in xs:\n        head = ListNode(x, head)\n    return head\n",
    ),
    "tree of the prompt, depth via recursion": (
        'class TreeNode:\n    def __init__(self, val=0, left=None, right=None):\n        self.val = val\n        self.left = left\n        self.right = right\n\n\ndef depth(root):\n    """max depth"""\n',
        "def check(candidate):\n    r = None\n    for i in range(150):\n        r = TreeNode(i, r, None)\n    assert candidate(r) == 150\n    assert candidate(TreeNode(1, TreeNode(2), TreeNode(3, TreeNode(4)))) == 3\n",
        "depth",
        "    if not root:\n        return 0\n    return 1 + max(depth(root.left), depth(root.right))\n",
        "    if not root:\n        return 0\n    return 1 + depth(root.left)\n",
    ),
    "tree built by the candidate compared with ==": (
        'from dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass\nclass Node:\n    val: int\n    left: "Optional[Node]" = None\n    right: "Optional[Node]" = None\n\n\ndef insert(root, v):\n    """BST insert, returns root"""\n',
        "def check(candidate):\n    r = None\n    for v in [5, 3, 8, 1]:\n        r = candidate(r, v)\n    assert r == Node(5, Node(3, Node(1)), Node(8))\n",
        "insert",
        "    if root is None:\n        return Node(v)\n    if v < root.val:\n        root.left = insert(root.left, v)\n    else:\n        root.right = insert(root.right, v)\n    return root\n",
        "    if root is None:\n        return Node(v)\n    if v > root.val:\n        root.left = insert(root.left, v)\n    else:\n        root.right = insert(root.right, v)\n    return root\n",
    ),
    "candidate's objects sorted by an attribute": (
        'class Item:\n    def __init__(self, w):\n        self.w = w\n\n\ndef items(ws):\n    """[Item(w)]"""\n',
        "def check(candidate):\n    r = candidate([3, 1, 2])\n    assert [i.w for i in sorted(r, key=lambda i: i.w)] == [1, 2, 3]\n    assert max(r, key=lambda i: i.w).w == 3\n",
        "items",
        "    return [Item(w) for w in ws]\n",
        "    return [Item(0) for w in ws]\n",
    ),
    "candidate's object with len, getitem, iter, contains": (
        'class Bag:\n    """a bag of items: len, [i], iteration, in"""\n',
        "def check(candidate):\n    b = candidate([1, 2, 3])\n    assert len(b) == 3 and b[0] == 1 and list(b) == [1, 2, 3] and 2 in b and 9 not in b\n    assert list(reversed(b)) == [3, 2, 1]\n",
        "Bag",
        "    def __init__(self, xs):\n        self.xs = list(xs)\n    def __len__(self):\n        return len(self.xs)\n    def __getitem__(self, i):\n        return self.xs[i]\n    def __iter__(self):\n        return iter(self.xs)\n    def __contains__(self, x):\n        return x in self.xs\n",
        "    def __init__(self, xs):\n        self.xs = list(xs)[::-1]\n    def __len__(self):\n        return len(self.xs)\n    def __getitem__(self, i):\n        return self.xs[i]\n    def __iter__(self):\n        return iter(self.xs)\n    def __contains__(self, x):\n        return x in self.xs\n",
    ),
    "candidate's iterator whose __iter__ is not itself": (
        'class Countdown:\n    """Countdown(n) yields n..1 and is its own iterator (iter(c) is c)."""\n',
        "def check(candidate):\n    c = candidate(3)\n    assert iter(c) is c\n    assert next(c) == 3 and list(c) == [2, 1] and list(c) == []\n",
        "Countdown",
        "    def __init__(self, n):\n        self.n = n\n    def __iter__(self):\n        return self\n"
        "    def __next__(self):\n        if self.n <= 0:\n            raise StopIteration\n        self.n -= 1\n        return self.n + 1\n",
        "    def __init__(self, n):\n        self.n = n\n    def __iter__(self):\n        return iter(range(self.n, 0, -1))\n"
        "    def __next__(self):\n        if self.n <= 0:\n            raise StopIteration\n        self.n -= 1\n        return self.n + 1\n",
    ),
    "candidate's object in an f-string and str": (
        'class Point:\n    """__str__ gives (x, y)"""\n',
        "def check(candidate):\n    p = candidate(1, 2)\n    assert str(p) == '(1, 2)' and f'{p}' == '(1, 2)' and '%s' % p == '(1, 2)'\n    assert f'{p!r}'.startswith('<') or True\n",
        "Point",
        "    def __init__(self, x, y):\n        self.x, self.y = x, y\n    def __str__(self):\n        return f'({self.x}, {self.y})'\n",
        "    def __init__(self, x, y):\n        self.x, self.y = x, y\n    def __str__(self):\n        return f'{self.x}, {self.y}'\n",
    ),
    "candidate's class methods chained": (
        'class Builder:\n    """add(x) returns self; build() returns list"""\n',
        "def check(candidate):\n    assert candidate().add(1).add(2).build() == [1, 2]\n",
        "Builder",
        "    def __init__(self):\n        self.xs = []\n    def add(self, x):\n        self.xs.append(x)\n        return self\n    def build(self):\n        return self.xs\n",
        "    def __init__(self):\n        self.xs = []\n    def add(self, x):\n        self.xs.insert(0, x)\n        return self\n    def build(self):\n        return self.xs\n",
    ),
    "candidate class with staticmethod and classmethod": (
        'class Calc:\n    """Calc.add(a, b) static; Calc.make() classmethod"""\n',
        "def check(candidate):\n    assert candidate.add(1, 2) == 3\n    assert isinstance(candidate.make(), candidate)\n",
        "Calc",
        "    @staticmethod\n    def add(a, b):\n        return a + b\n    @classmethod\n    def make(cls):\n        return cls()\n",
        "    @staticmethod\n    def add(a, b):\n        return a * b\n    @classmethod\n    def make(cls):\n        return cls()\n",
    ),
    "candidate's object hashed into a set by identity": (
        'class Tok:\n    pass\n\n\ndef toks(n):\n    """n distinct Tok objects"""\n',
        "def check(candidate):\n    r = candidate(3)\n    assert len(set(r)) == 3 and len({id(x) for x in r}) == 3\n",
        "toks",
        "    return [Tok() for _ in range(n)]\n",
        "    t = Tok()\n    return [t] * n\n",
    ),
    "enum of the prompt: value, name, iteration": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "def check(candidate):\n    r = candidate('-')\n    assert r.value == '-' and r.name == 'SUB' and r in list(Op) and isinstance(r, Op)\n    assert {candidate('+'): 1}[Op.ADD] == 1\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.ADD\n",
    ),
    "IntEnum of the prompt compared with ints": (
        'from enum import IntEnum\n\n\nclass Lvl(IntEnum):\n    LOW = 1\n    HIGH = 2\n\n\ndef lvl(x):\n    """HIGH if x > 10 else LOW"""\n',
        "def check(candidate):\n    assert candidate(11) == 2 and candidate(1) < Lvl.HIGH and candidate(11) is Lvl.HIGH\n    assert sorted([candidate(11), candidate(1)]) == [1, 2]\n",
        "lvl",
        "    return Lvl.HIGH if x > 10 else Lvl.LOW\n",
        "    return Lvl.LOW\n",
    ),
    "IntEnum members of the prompt as keys, their type the prompt's class": (
        _d(
            '''
            from enum import IntEnum

            class Prio(IntEnum):
                LOW = 1
                HIGH = 3

            def triage(tasks):
                """{Prio: [titles]} from (title, Prio or its name), most urgent first"""
            '''
        ),
        _d(
            """
            def check(candidate):
                out = candidate([("a", "low"), ("b", Prio.HIGH), ("c", "HIGH")])
                assert out == {Prio.HIGH: ["b", "c"], Prio.LOW: ["a"]}
                assert list(out) == [Prio.HIGH, Prio.LOW] and out[3] == ["b", "c"]
                assert all(type(k) is Prio for k in out) and Prio(1) in out
            """
        ),
        "triage",
        _body(
            """
            groups = {}
            for title, p in tasks:
                p = Prio[p.upper()] if isinstance(p, str) else p
                groups.setdefault(p, []).append(title)
            return {p: groups[p] for p in sorted(groups, reverse=True)}
            """
        ),
        _body(
            """
            groups = {}
            for title, p in tasks:
                p = Prio[p.upper()] if isinstance(p, str) else p
                groups.setdefault(p, []).append(title)
            return {p: groups[p] for p in sorted(groups)}
            """
        ),
    ),
    "str and plain enum members of the prompt, their type the prompt's class": (
        _d(
            '''
            from enum import Enum

            class Unit(str, Enum):
                KG = "kg"
                LB = "lb"

            class Kind(Enum):
                SOLID = 1
                FLUID = 2

            def parse(s):
                """(Unit, Kind) of "3kg" (solid) or "2lb~" (fluid)"""
            '''
        ),
        _d(
            """
            def check(candidate):
                u, k = candidate("2lb~")
                assert type(u) is Unit and u == "lb" and u is Unit.LB
                assert type(k) == Kind and k is Kind["FLUID"] and Kind(2) is k
                assert candidate("3kg") == (Unit("kg"), Kind.SOLID)
            """
        ),
        "parse",
        "    return Unit(s.rstrip('~')[-2:]), Kind.FLUID if s.endswith('~') else Kind.SOLID\n",
        "    return Unit(s.rstrip('~')[-2:]), Kind.SOLID\n",
    ),
    "a prompt's enum class the test passes to the candidate": (
        _d(
            '''
            from enum import IntEnum

            class Prio(IntEnum):
                LOW = 1
                HIGH = 3

            def parse(s, cls):
                """the member of enum cls named s (any case), or s if it is one"""
            '''
        ),
        _d(
            """
            def check(candidate):
                assert candidate("low", Prio) is Prio.LOW and candidate(Prio.HIGH, Prio) is Prio.HIGH
                assert type(candidate("High", Prio)) is Prio
            """
        ),
        "parse",
        "    return s if isinstance(s, cls) else cls[s.upper()]\n",
        "    return s if isinstance(s, cls) else cls[s]\n",
    ),
    "namedtuple of the prompt unpacked and indexed": (
        'from typing import NamedTuple\n\n\nclass Pt(NamedTuple):\n    x: int\n    y: int\n\n\ndef mid(a, b):\n    """midpoint Pt"""\n',
        "def check(candidate):\n    m = candidate(Pt(0, 0), Pt(2, 4))\n    x, y = m\n    assert (x, y) == (1, 2) and m[1] == 2 and m._asdict() == {'x': 1, 'y': 2} and m == Pt(1, 2)\n    assert isinstance(m, tuple)\n",
        "mid",
        "    return Pt((a.x + b.x) // 2, (a.y + b.y) // 2)\n",
        "    return Pt(a.x + b.x, a.y + b.y)\n",
    ),
    "str subclass result": (
        'class Name(str):\n    pass\n\n\ndef name(s):\n    """Name(s.title())"""\n',
        "def check(candidate):\n    r = candidate('ann lee')\n    assert r == 'Ann Lee' and r.upper() == 'ANN LEE' and r.split() == ['Ann', 'Lee'] and len(r) == 7\n    assert r + '!' == 'Ann Lee!' and isinstance(r, str)\n",
        "name",
        "    return Name(s.title())\n",
        "    return Name(s)\n",
    ),
    "dict subclass result": (
        'def count(s):\n    """Counter of characters"""\n',
        "def check(candidate):\n    r = candidate('aab')\n    assert r['a'] == 2 and r.most_common(1) == [('a', 2)] and dict(r) == {'a': 2, 'b': 1}\n    assert r['z'] == 0\n",
        "count",
        "    from collections import Counter\n    return Counter(s)\n",
        "    from collections import Counter\n    return Counter(s.upper())\n",
    ),
    "defaultdict(list) result": (
        'from collections import defaultdict\n\n\ndef group(ws):\n    """defaultdict(list) by first letter"""\n',
        "def check(candidate):\n    r = candidate(['ab', 'ac', 'b'])\n    assert r['a'] == ['ab', 'ac'] and r['zz'] == [] and 'zz' in r\n",
        "group",
        "    d = defaultdict(list)\n    for w in ws:\n        d[w[0]].append(w)\n    return d\n",
        "    d = {}\n    for w in ws:\n        d.setdefault(w[0], []).append(w)\n    return d\n",
    ),
    "heapq list returned and popped": (
        'import heapq\n\n\ndef heap(xs):\n    """heapified copy"""\n',
        "import heapq\ndef check(candidate):\n    h = candidate([3, 1, 2])\n    assert [heapq.heappop(h) for _ in range(3)] == [1, 2, 3]\n",
        "heap",
        "    h = list(xs)\n    heapq.heapify(h)\n    return h\n",
        "    return list(xs)\n",
    ),
    "test reads a module constant of the prompt": (
        'MOD = 10 ** 9 + 7\n\n\ndef f(n):\n    """2 ** n % MOD"""\n',
        "def check(candidate):\n    assert candidate(100) == pow(2, 100, MOD)\n",
        "f",
        "    return pow(2, n, MOD)\n",
        "    return pow(2, n)\n",
    ),
    # enum members of the prompt used as keys
    "enum hash": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "def check(candidate):\n    assert hash(candidate('+')) == hash(Op.ADD)\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.SUB\n",
    ),
    "enum dict key": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "def check(candidate):\n    assert {candidate('+'): 1}[Op.ADD] == 1\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.SUB\n",
    ),
    "enum in list": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "def check(candidate):\n    assert candidate('+') in list(Op)\n    assert candidate('+') != Op.SUB\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.SUB\n",
    ),
    "enum is": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "def check(candidate):\n    assert candidate('+') is Op.ADD\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.SUB\n",
    ),
    "enum isinstance": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "def check(candidate):\n    assert isinstance(candidate('+'), Op) and candidate('+') == Op.ADD\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.SUB\n",
    ),
    "enum in set": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "def check(candidate):\n    assert candidate('+') in {Op.ADD}\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.SUB\n",
    ),
    "enum list of members": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "def check(candidate):\n    assert [candidate(c) for c in '+-'] == [Op.ADD, Op.SUB]\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.SUB\n",
    ),
    "enum Counter": (
        'from enum import Enum\n\n\nclass Op(Enum):\n    ADD = "+"\n    SUB = "-"\n\n\ndef parse(c):\n    """Op for c"""\n',
        "from collections import Counter\ndef check(candidate):\n    assert Counter(candidate(c) for c in '++-')[Op.ADD] == 2\n",
        "parse",
        "    return Op(c)\n",
        "    return Op.SUB\n",
    ),
    "dataclass hash in set": (
        'from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass P:\n    x: int\n\n\ndef mk(x):\n    """P(x)"""\n',
        "def check(candidate):\n    assert candidate(1) in {P(1)} and hash(candidate(2)) == hash(P(2))\n",
        "mk",
        "    return P(x)\n",
        "    return P(0)\n",
    ),
    "dataclass vars": (
        'from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass P:\n    x: int\n\n\ndef mk(x):\n    """P(x)"""\n',
        "def check(candidate):\n    assert vars(candidate(1)) == {'x': 1}\n",
        "mk",
        "    return P(x)\n",
        "    return P(0)\n",
    ),
    "dataclass __dict__": (
        'from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass P:\n    x: int\n\n\ndef mk(x):\n    """P(x)"""\n',
        "def check(candidate):\n    assert candidate(1).__dict__ == {'x': 1}\n",
        "mk",
        "    return P(x)\n",
        "    return P(0)\n",
    ),
    "dataclass repr": (
        'from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass P:\n    x: int\n\n\ndef mk(x):\n    """P(x)"""\n',
        "def check(candidate):\n    assert repr(candidate(1)) == 'P(x=1)'\n",
        "mk",
        "    return P(x)\n",
        "    return P(0)\n",
    ),
    # other
    "context manager returned by the candidate": (
        'class Session:\n    """context manager: entering returns itself; add(x); exiting sets closed"""\n',
        "def check(candidate):\n    with candidate() as s:\n        s.add(1)\n        s.add(2)\n    assert s.items == [1, 2] and s.closed is True\n    try:\n        with candidate() as s:\n            raise KeyError('k')\n    except KeyError:\n        pass\n    assert s.closed is True\n",
        "Session",
        "    def __init__(self):\n        self.items, self.closed = [], False\n    def __enter__(self):\n        return self\n    def add(self, x):\n        self.items.append(x)\n    def __exit__(self, et, ev, tb):\n        self.closed = True\n        return False\n",
        "    def __init__(self):\n        self.items, self.closed = [], False\n    def __enter__(self):\n        return self\n    def add(self, x):\n        self.items.append(x)\n    def __exit__(self, et, ev, tb):\n        self.closed = et is None\n        return False\n",
    ),
    "context manager that suppresses an exception": (
        'class Ignore:\n    """context manager suppressing the exception types given to __init__"""\n',
        "def check(candidate):\n    with candidate(KeyError):\n        raise KeyError('x')\n    try:\n        with candidate(KeyError):\n            raise ValueError('y')\n    except ValueError:\n        pass\n    else:\n        assert False\n",
        "Ignore",
        "    def __init__(self, *types):\n        self.types = types\n    def __enter__(self):\n        return self\n    def __exit__(self, et, ev, tb):\n        return et is not None and issubclass(et, self.types)\n",
        "    def __init__(self, *types):\n        self.types = types\n    def __enter__(self):\n        return self\n    def __exit__(self, et, ev, tb):\n        return True\n",
    ),
    "hasattr and getattr with default on the candidate's object": (
        'class Cfg:\n    """attributes from keyword arguments"""\n',
        "def check(candidate):\n    c = candidate(a=1)\n    assert hasattr(c, 'a') and not hasattr(c, 'b') and getattr(c, 'b', 7) == 7 and c.a == 1\n",
        "Cfg",
        "    def __init__(self, **kw):\n        for k, v in kw.items():\n            setattr(self, k, v)\n",
        "    def __init__(self, **kw):\n        self.b = 1\n",
    ),
    "vars of the candidate's object": (
        'class Rec:\n    """stores x and y"""\n',
        "def check(candidate):\n    assert vars(candidate(1, 2)) == {'x': 1, 'y': 2}\n    assert candidate(1, 2).__dict__ == {'x': 1, 'y': 2}\n",
        "Rec",
        "    def __init__(self, x, y):\n        self.x, self.y = x, y\n",
        "    def __init__(self, x, y):\n        self.x, self.y = y, x\n",
    ),
    "candidate sorts the test's objects by attribute": (
        'def order(people):\n    """sorted by .age"""\n',
        "class Person:\n    def __init__(self, name, age):\n        self.name, self.age = name, age\ndef check(candidate):\n    a, b = Person('a', 30), Person('b', 20)\n    r = candidate([a, b])\n    assert r[0] is b and r[1] is a\n",
        "order",
        "    return sorted(people, key=lambda p: p.age)\n",
        "    return list(people)\n",
    ),
    # more state, values and calls
    "enum re-emitted by the completion, used by the test": (
        'from enum import Enum\n\n\nclass Suit(Enum):\n    HEARTS = "H"\n    SPADES = "S"\n\n\ndef suit(c):\n    """Suit for its letter"""\n',
        "def check(candidate):\n    assert candidate('H') is Suit('H') and candidate('S') == Suit['SPADES']\n    assert len(Suit) == 2 and [s.value for s in Suit] == ['H', 'S']\n    assert {candidate('H'): 1} == {Suit.HEARTS: 1}\n",
        "suit",
        "    return Suit(c)\n\n\nfrom enum import Enum\n\n\nclass Suit(Enum):\n    HEARTS = 'H'\n    SPADES = 'S'\n",
        "    return Suit.HEARTS\n\n\nfrom enum import Enum\n\n\nclass Suit(Enum):\n    HEARTS = 'H'\n    SPADES = 'S'\n",
    ),
    "flag enum member of the prompt, its value": (
        'from enum import Flag, auto\n\n\nclass Perm(Flag):\n    R = auto()\n    W = auto()\n\n\ndef both():\n    """R | W"""\n',
        "def check(candidate):\n    assert candidate().value == 3 and Perm.R in candidate()\n",
        "both",
        "    return Perm.R | Perm.W\n",
        "    return Perm.R\n",
    ),
    "int flag members of the prompt tested with in": (
        'from enum import IntFlag\n\n\nclass Mode(IntFlag):\n    R = 4\n    W = 2\n\n\ndef mode(s):\n    """Mode of "rw", "r-", ..."""\n',
        "def check(candidate):\n    m = candidate('r-')\n    assert Mode.R in m and Mode.W not in m\n    assert candidate('rw').R in candidate('rw')\n",
        "mode",
        "    return Mode((4 if s[0] == 'r' else 0) | (2 if s[1] == 'w' else 0))\n",
        "    return Mode.R | Mode.W\n",
    ),
    "enum members sorted by value and in a set": (
        'from enum import Enum\n\n\nclass Size(Enum):\n    S = 1\n    M = 2\n    L = 3\n\n\ndef sizes(xs):\n    """distinct Size members of the values xs, as a set"""\n',
        "def check(candidate):\n    r = candidate([3, 1, 3])\n    assert r == {Size.S, Size.L}\n    assert sorted(r, key=lambda s: s.value) == [Size.S, Size.L]\n",
        "sizes",
        "    return {Size(x) for x in xs}\n",
        "    return {Size(x) for x in xs[:1]}\n",
    ),
    "test class instances returned in a new order": (
        'def rev(xs):\n    """reversed list"""\n',
        "class T:\n    def __init__(self, v):\n        self.v = v\n    def __eq__(self, o):\n        return isinstance(o, T) and o.v == self.v\ndef check(candidate):\n    a, b = T(1), T(2)\n    assert candidate([a, b]) == [T(2), T(1)]\n",
        "rev",
        "    return xs[::-1]\n",
        "    return xs\n",
    ),
    "candidate compares the test's objects": (
        'def biggest(xs):\n    """max of xs"""\n',
        "import functools\n@functools.total_ordering\nclass V:\n    def __init__(self, v):\n        self.v = v\n    def __eq__(self, o):\n        return self.v == o.v\n    def __lt__(self, o):\n        return self.v < o.v\ndef check(candidate):\n    vs = [V(2), V(5), V(1)]\n    assert candidate(vs) is vs[1]\n",
        "biggest",
        "    return max(xs)\n",
        "    return min(xs)\n",
    ),
    "dict returned with the test's objects as keys": (
        'def count(xs):\n    """{x: count}"""\n',
        "class K:\n    def __init__(self, n):\n        self.n = n\n    def __eq__(self, o):\n        return self.n == o.n\n    def __hash__(self):\n        return hash(self.n)\ndef check(candidate):\n    r = candidate([K(1), K(1), K(2)])\n    assert r[K(1)] == 2 and r[K(2)] == 1\n",
        "count",
        "    d = {}\n    for x in xs:\n        d[x] = d.get(x, 0) + 1\n    return d\n",
        "    return {x: 1 for x in xs}\n",
    ),
    # trees, lists and graphs of the prompt's classes
    "tree inverted in place": (
        'class TreeNode:\n    def __init__(self, val=0, left=None, right=None):\n        self.val = val\n        self.left = left\n        self.right = right\n\n\ndef invert(root):\n    """mirror the tree in place, return root"""\n',
        "def inorder(t):\n    return inorder(t.left) + [t.val] + inorder(t.right) if t else []\ndef check(candidate):\n    t = TreeNode(2, TreeNode(1), TreeNode(3, None, TreeNode(4)))\n    r = candidate(t)\n    assert r is t and inorder(t) == [4, 3, 2, 1]\n",
        "invert",
        "    if root:\n        root.left, root.right = invert(root.right), invert(root.left)\n    return root\n",
        "    if root:\n        root.left, root.right = root.right, root.left\n    return root\n",
    ),
    "tree values incremented in place": (
        'class TreeNode:\n    def __init__(self, val=0, left=None, right=None):\n        self.val = val\n        self.left = left\n        self.right = right\n\n\ndef bump(root):\n    """add 1 to every value in place"""\n',
        "def check(candidate):\n    t = TreeNode(1, TreeNode(2))\n    candidate(t)\n    assert t.val == 2 and t.left.val == 3 and t.right is None\n",
        "bump",
        "    if root:\n        root.val += 1\n        bump(root.left)\n        bump(root.right)\n",
        "    if root:\n        root.val += 1\n",
    ),
    "linked list node deleted": (
        'class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n        self.next = next\n\n\ndef drop_second(head):\n    """remove the second node in place"""\n',
        "def check(candidate):\n    c = ListNode(3)\n    h = ListNode(1, ListNode(2, c))\n    candidate(h)\n    assert h.next is c and c.next is None\n",
        "drop_second",
        "    head.next = head.next.next\n",
        "    head.next.next = None\n",
    ),
    "graph adjacency of the prompt's class extended": (
        'class Graph:\n    def __init__(self):\n        self.adj = {}\n\n\ndef add_edge(g, u, v):\n    """undirected edge u-v in g.adj (lists)"""\n',
        "def check(candidate):\n    g = Graph()\n    candidate(g, 1, 2)\n    assert g.adj == {1: [2], 2: [1]}\n",
        "add_edge",
        "    g.adj.setdefault(u, []).append(v)\n    g.adj.setdefault(v, []).append(u)\n",
        "    g.adj[u] = [v]\n",
    ),
    "graph adjacency rebuilt and set": (
        'class Graph:\n    def __init__(self):\n        self.adj = {}\n\n\ndef add_edge(g, u, v):\n    """undirected edge u-v in g.adj (lists)"""\n',
        "def check(candidate):\n    g = Graph()\n    candidate(g, 1, 2)\n    assert g.adj == {1: [2], 2: [1]}\n",
        "add_edge",
        "    adj = dict(g.adj)\n    adj.setdefault(u, []).append(v)\n    adj.setdefault(v, []).append(u)\n    g.adj = adj\n",
        "    g.adj = {u: [v]}\n",
    ),
    "BFS over the test's graph dict": (
        'def bfs(graph, start):\n    """visit order"""\n',
        "def check(candidate):\n    g = {'a': ['b', 'c'], 'b': ['d'], 'c': [], 'd': []}\n    assert candidate(g, 'a') == ['a', 'b', 'c', 'd']\n",
        "bfs",
        "    from collections import deque\n    seen, q, out = {start}, deque([start]), []\n    while q:\n        x = q.popleft()\n        out.append(x)\n        for y in graph[x]:\n            if y not in seen:\n                seen.add(y)\n                q.append(y)\n    return out\n",
        "    out, st = [], [start]\n    while st:\n        x = st.pop()\n        out.append(x)\n        st.extend(graph[x])\n    return out\n",
    ),
    "candidate's class with a class attribute counter": (
        'class Ticket:\n    """each Ticket() gets the next number, from 1"""\n',
        "def check(candidate):\n    a, b = candidate(), candidate()\n    assert (a.n, b.n) == (1, 2)\n",
        "Ticket",
        "    count = 0\n    def __init__(self):\n        Ticket.count += 1\n        self.n = Ticket.count\n",
        "    count = 0\n    def __init__(self):\n        self.n = Ticket.count\n",
    ),
    "LeetCode-style Solution class": (
        "from typing import List\n\n\nclass Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n",
        "def check(candidate):\n    s = candidate()\n    assert sorted(s.twoSum([2, 7, 11, 15], 9)) == [0, 1]\n    assert sorted(Solution().twoSum([3, 3], 6)) == [0, 1]\n",
        "Solution",
        "        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n",
        "        return [0, len(nums) - 1]\n",
    ),
    "prompt's dataclass with a default factory, built by the test": (
        'from dataclasses import dataclass, field\n\n\n@dataclass\nclass Inv:\n    items: list = field(default_factory=list)\n\n\ndef total(inv):\n    """len(inv.items)"""\n',
        "def check(candidate):\n    assert candidate(Inv()) == 0 and candidate(Inv([1, 2])) == 2\n",
        "total",
        "    return len(inv.items)\n",
        "    return 0\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "dataclasses.asdict of a prompt's dataclass the candidate returns": (
        _DATACLASS,
        "import dataclasses\ndef check(candidate):\n    assert dataclasses.asdict(candidate(1)) == {'x': 1}\n",
        "mk",
        "    return P(x)\n",
        "failed",
        "passed",
        "asdict() should be called on dataclass instances",
    ),
    "a prompt's skeleton that runs only with the completion's body": (
        _d(
            '''
            from functools import total_ordering

            @total_ordering
            class Rank:
                """Rank(n), ordered by n"""
            '''
        ),
        "def check(candidate):\n    assert candidate(1) < candidate(2)\n",
        "Rank",
        "    def __init__(self, n):\n        self.n = n\n\n    def __eq__(self, o):\n        return self.n == o.n\n\n    def __lt__(self, o):\n        return self.n < o.n\n",
        "error",
        "passed",
        "strict scoring: the prompt does not run on its own",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("classes"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_classes_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_classes_limits_carry_their_reason(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
