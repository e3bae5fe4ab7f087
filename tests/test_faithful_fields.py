"""Fields of objects read across the two processes in batches, judged as
the single program judges them: a read after the other side's code ran
(a callback, a method) sees what that code did, a write the candidate
makes to the test's object is there when the test's code next runs, and
a name that is not a plain field (a property, a method, ``__getattr__``)
runs its code each time.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, score_both

from aioeval.types import CandidateResult

_NODE = "class Node:\n    def __init__(self, val, next=None):\n        self.val = val\n        self.next = next\n\n\n"

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a 2,000-node list of the test's own class, relinked by the candidate": (
        'def reverse(head):\n    """reverse the list of .val/.next nodes in place; the new head"""\n',
        _d(
            """
            class N:
                def __init__(self, val, next=None):
                    self.val = val
                    self.next = next
            def check(candidate):
                head = None
                for v in range(2000):
                    head = N(v, head)
                r = candidate(head)
                out = []
                while r is not None:
                    out.append(r.val)
                    r = r.next
                assert out == list(range(2000)) and head.next is None
            """
        ),
        "reverse",
        "    prev = None\n    while head is not None:\n        head.next, prev, head = prev, head, head.next\n    return prev\n",
        "    prev = None\n    while head is not None and head.next is not None:\n"
        "        head.next, prev, head = prev, head, head.next\n    return prev\n",
    ),
    "a 2,000-node list the test builds with the prompt's class and walks": (
        _NODE + 'def reverse(head):\n    """reverse in place; the new head"""\n',
        _d(
            """
            def check(candidate):
                head = None
                for v in range(2000):
                    head = Node(v, head)
                r = candidate(head)
                out = []
                while r is not None:
                    out.append(r.val)
                    r = r.next
                assert out == list(range(2000))
            """
        ),
        "reverse",
        "    prev = None\n    while head is not None:\n        head.next, prev, head = prev, head, head.next\n    return prev\n",
        "    return head\n",
    ),
    "a field read again after the test's callback changed it": (
        'def bump_twice(box, bump):\n    """[box.n, then box.n after bump(box), then after bump(box) again]"""\n',
        _d(
            """
            class Box:
                def __init__(self):
                    self.n = 0
            def check(candidate):
                def bump(b):
                    b.n += 1
                assert candidate(Box(), bump) == [0, 1, 2]
            """
        ),
        "bump_twice",
        "    out = [box.n]\n    bump(box)\n    out.append(box.n)\n    bump(box)\n    out.append(box.n)\n    return out\n",
        "    n = box.n\n    bump(box)\n    bump(box)\n    return [n, n + 1, n + 1]\n",
    ),
    "a field the candidate writes, read by the test's callback and after": (
        'def fill(box, seen):\n    """set box.n = 5, call seen(box), then set box.n = 7"""\n',
        _d(
            """
            class Box:
                def __init__(self):
                    self.n = 0
            def check(candidate):
                got = []
                b = Box()
                candidate(b, lambda x: got.append(x.n))
                assert got == [5] and b.n == 7
            """
        ),
        "fill",
        "    box.n = 5\n    seen(box)\n    box.n = 7\n",
        "    seen(box)\n    box.n = 7\n",
    ),
    "a property of the test's class read each time": (
        'def read_twice(c):\n    """[c.value, c.value]"""\n',
        _d(
            """
            class Counter:
                def __init__(self):
                    self.calls = 0
                @property
                def value(self):
                    self.calls += 1
                    return self.calls
            def check(candidate):
                c = Counter()
                assert candidate(c) == [1, 2] and c.calls == 2
            """
        ),
        "read_twice",
        "    return [c.value, c.value]\n",
        "    v = c.value\n    return [v, v]\n",
    ),
    "the candidate's object read again after its own method changed it": (
        'class Acc:\n    """Acc(): .total starts at 0; add(x) adds x to .total"""\n',
        _d(
            """
            def check(candidate):
                a = candidate()
                seen = [a.total]
                a.add(3)
                seen.append(a.total)
                a.add(4)
                seen.append(a.total)
                assert seen == [0, 3, 7]
            """
        ),
        "Acc",
        "    def __init__(self):\n        self.total = 0\n    def add(self, x):\n        self.total += x\n",
        "    def __init__(self):\n        self.total = 0\n    def add(self, x):\n        self.total = x\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("fields"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_fields_read_in_batches_are_what_one_program_reads(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
