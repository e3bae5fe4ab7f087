"""Containers that cross between the test's code and the candidate's by
other ways than a call's arguments and answer, judged as the single
program judges them: a list the test passed that the candidate hands on
to a function of the test's (a mock that records its arguments) is the
test's own list there; a list of the candidate's that a mock records stays
one object with the candidate's; a list a callback of the test's returns
is the test's own to the candidate; a list the test reads from a field of
the candidate's object, or the candidate from the test's object, is the
object's own.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_LOG = (
    "class Log:\n"
    '    """Log(lines) keeps lines (the caller\'s list); add(x, notify) appends x to it,'
    ' then calls notify()."""\n'
)
_LOG_RIGHT = (
    "    def __init__(self, lines):\n        self.lines = lines\n"
    "    def add(self, x, notify):\n        self.lines.append(x)\n        notify()\n"
)


def _log_test(n: int) -> str:
    """Both sides append to an n-item list the candidate keeps, within one call."""
    return _d(
        f"""
        def check(candidate):
            lines = list(range({n}))
            log = candidate(lines)
            log.add('a', lambda: lines.append('b'))
            assert lines[-2:] == ['a', 'b'], lines[-2:]
        """
    )


# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "the test's list handed on to a mock, then changed through call_args": (
        "def forward(items, sink):\n"
        '    """Call sink once with a new list of items\' elements; items stays the caller\'s own."""\n',
        _d(
            """
            from unittest import mock
            def check(candidate):
                m = mock.Mock()
                xs = [1, 2]
                candidate(xs, m)
                got = m.call_args[0][0]
                assert got == [1, 2]
                got.append(3)
                assert xs == [1, 2], xs
            """
        ),
        "forward",
        "    sink(list(items))\n",
        "    sink(items)\n",
    ),
    "the test's list inside another, handed on to the test's function": (
        "def first_row(grid, use):\n"
        '    """Call use(row) with a copy of grid[0]; grid stays as it is."""\n',
        _d(
            """
            def check(candidate):
                grid = [[1, 2], [3]]
                kept = []
                candidate(grid, kept.append)
                kept[0].append(9)
                assert grid == [[1, 2], [3]], grid
            """
        ),
        "first_row",
        "    use(list(grid[0]))\n",
        "    use(grid[0])\n",
    ),
    "the candidate's list recorded by a mock, grown after": (
        "def build(n, report):\n"
        '    """Append 0..n-1 to one new list, calling report(acc) with that same list after'
        ' each append; return it."""\n',
        _d(
            """
            from unittest import mock
            def check(candidate):
                m = mock.Mock()
                out = candidate(3, m)
                assert out == [0, 1, 2]
                assert [c.args[0] for c in m.call_args_list] == [[0, 1, 2]] * 3
                assert all(c.args[0] is out for c in m.call_args_list)
            """
        ),
        "build",
        "    acc = []\n    for i in range(n):\n        acc.append(i)\n        report(acc)\n"
        "    return acc\n",
        "    acc = []\n    for i in range(n):\n        acc.append(i)\n        report(list(acc))\n"
        "    return acc\n",
    ),
    "the candidate's list a mock recorded, read by the test's callback mid-call": (
        "def fill(n, seen, peek):\n"
        '    """Call seen(acc) once with one new list acc, then append 0..n-1 to acc,'
        ' calling peek() after each append; return acc."""\n',
        _d(
            """
            from unittest import mock
            def check(candidate):
                m = mock.Mock()
                sizes = []
                out = candidate(3, m, lambda: sizes.append(len(m.call_args[0][0])))
                assert sizes == [1, 2, 3], sizes
                assert out == [0, 1, 2]
            """
        ),
        "fill",
        "    acc = []\n    seen(acc)\n    for i in range(n):\n        acc.append(i)\n"
        "        peek()\n    return acc\n",
        "    acc = []\n    seen(list(acc))\n    for i in range(n):\n        acc.append(i)\n"
        "        peek()\n    return acc\n",
    ),
    "a list of the test's a callback returns, changed by the candidate": (
        "def with_extra(get_items, x):\n"
        '    """Return a new list: the items get_items() returns, then x. The caller\'s'
        ' list stays as it is."""\n',
        _d(
            """
            def check(candidate):
                src = [1, 2]
                assert candidate(lambda: src, 3) == [1, 2, 3]
                assert src == [1, 2], src
            """
        ),
        "with_extra",
        "    return get_items() + [x]\n",
        "    items = get_items()\n    items.append(x)\n    return items\n",
    ),
    "a list of the test's a callback returns, kept by the candidate's object": (
        "class Basket:\n"
        '    """Basket(source): add(x) appends x to the list source() returns (the'
        ' caller\'s own list, taken once, at the first add)."""\n',
        _d(
            """
            def check(candidate):
                src = []
                b = candidate(lambda: src)
                b.add(1)
                src.append(2)
                b.add(3)
                assert src == [1, 2, 3], src
            """
        ),
        "Basket",
        "    def __init__(self, source):\n        self.source, self.items = source, None\n"
        "    def add(self, x):\n        if self.items is None:\n"
        "            self.items = self.source()\n        self.items.append(x)\n",
        "    def __init__(self, source):\n        self.source, self.items = source, None\n"
        "    def add(self, x):\n        if self.items is None:\n"
        "            self.items = list(self.source())\n        self.items.append(x)\n"
        "        self.source()[:] = self.items\n",
    ),
    "a list field of the candidate's function, read before it grows": (
        "def make_ledger():\n"
        '    """A function post(x) that records x; post.entries is the list of what was'
        ' posted (the same list object on every access)."""\n',
        _d(
            """
            def check(candidate):
                post = candidate()
                seen = post.entries
                post(5)
                post(7)
                assert seen == [5, 7] and post.entries is seen, seen
            """
        ),
        "make_ledger",
        "    def post(x):\n        post.entries.append(x)\n    post.entries = []\n    return post\n",
        "    def post(x):\n        post.entries = post.entries + [x]\n    post.entries = []\n"
        "    return post\n",
    ),
    "a list field of the candidate's object, read before it grows": (
        "class Log:\n"
        '    """Log(): add(x) appends x to self.lines, one list for the log\'s life."""\n',
        _d(
            """
            def check(candidate):
                log = candidate()
                lines = log.lines
                log.add('a')
                assert lines == ['a'], lines
            """
        ),
        "Log",
        "    def __init__(self):\n        self.lines = []\n"
        "    def add(self, x):\n        self.lines.append(x)\n",
        "    def __init__(self):\n        self.lines = []\n"
        "    def add(self, x):\n        self.lines = self.lines + [x]\n",
    ),
    "a list the candidate reads from the test's object and sorts": (
        "def median_price(order):\n"
        '    """The median of order.prices (odd length), without modifying the order."""\n',
        _d(
            """
            class Order:
                def __init__(self, prices):
                    self.prices = prices
            def check(candidate):
                o = Order([5, 1, 3])
                assert candidate(o) == 3
                assert o.prices == [5, 1, 3], "order was modified"
            """
        ),
        "median_price",
        "    return sorted(order.prices)[len(order.prices) // 2]\n",
        "    order.prices.sort()\n    return order.prices[len(order.prices) // 2]\n",
    ),
    "a list the candidate reads from the test's object and keeps": (
        "class Tracker:\n"
        '    """Tracker(order): mark(x) appends x to order.done, the order\'s own list."""\n',
        _d(
            """
            class Order:
                def __init__(self):
                    self.done = []
            def check(candidate):
                o = Order()
                t = candidate(o)
                t.mark(1)
                t.mark(2)
                assert o.done == [1, 2], o.done
            """
        ),
        "Tracker",
        "    def __init__(self, order):\n        self.done = order.done\n"
        "    def mark(self, x):\n        self.done.append(x)\n",
        "    def __init__(self, order):\n        self.order = order\n"
        "    def mark(self, x):\n        self.order.done = self.order.done + [x]\n"
        "        if x == 2:\n            self.order.done = [2]\n",
    ),
    "lists of the candidate's 1,500 nodes read and let go, then another call": (
        "class Node:\n    def __init__(self, v):\n        self.v = v\n        self.kids = []\n\n\n"
        "def chain(n):\n"
        '    """The head of a chain of n Nodes valued 0..n-1: each node\'s kids is [the next'
        ' node], the last one\'s is empty."""\n',
        _d(
            """
            def check(candidate):
                node, count = candidate(1500), 0
                while node.kids:
                    count += len(node.kids)
                    node = node.kids[0]
                assert count == 1499
                assert candidate(2).v == 0
            """
        ),
        "chain",
        "    nodes = [Node(i) for i in range(n)]\n    for a, b in zip(nodes, nodes[1:]):\n"
        "        a.kids.append(b)\n    return nodes[0]\n",
        "    nodes = [Node(i + 1) for i in range(n)]\n    for a, b in zip(nodes, nodes[1:]):\n"
        "        a.kids.append(b)\n    return nodes[0]\n",
    ),
    "lists of the test's 1,500 nodes read and let go by the candidate": (
        "def depth(node):\n"
        '    """How many nodes the chain from node has, following node.kids[0]."""\n',
        _d(
            """
            class Node:
                def __init__(self, nxt=None):
                    self.kids = [] if nxt is None else [nxt]
            def check(candidate):
                head = None
                for _ in range(1500):
                    head = Node(head)
                assert candidate(head) == 1500
                assert candidate(Node()) == 1
            """
        ),
        "depth",
        "    n = 1\n    while node.kids:\n        node = node.kids[0]\n        n += 1\n    return n\n",
        "    n = 0\n    while node.kids:\n        node = node.kids[0]\n        n += 1\n    return n\n",
    ),
    "a kept list both sides append to within one call": (
        _LOG,
        _log_test(10),
        "Log",
        _LOG_RIGHT,
        "    def __init__(self, lines):\n        self.lines = lines\n"
        "    def add(self, x, notify):\n        notify()\n        self.lines.append(x)\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "a kept list of 5,000 items both sides append to within one call": (
        _LOG,
        _log_test(5000),
        "Log",
        _LOG_RIGHT,
        "failed",
        "passed",
        "strict scoring: the test's code and the candidate's both changed a container",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("passed_on"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_containers_passed_on_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_where_strict_scoring_cannot_keep_them_in_step_the_reason_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
