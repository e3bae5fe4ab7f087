"""Class identity of the candidate's objects, judged as the single program
judges it: ``type(x) is Node`` of the prompt's class (with or without
``__slots__``), ``isinstance`` of a standard class the prompt's class
derives from (a ``logging.Formatter``), a log record the test builds read
by the candidate's formatter, and ``id()`` across the two processes, which
strict scoring names where it cannot follow.

Each shape is a HumanEval-format problem with a right and a wrong answer,
scored in one strict and one official run (`test_faithful.score_both`).
``LIMITS`` are where strict scoring still judges otherwise, each listed in
docs/strict-scoring.md with its reason."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_SLOTTED = _d(
    '''
    class ListNode:
        __slots__ = ("value", "next")

        def __init__(self, value, next=None):
            self.value = value
            self.next = next


    def from_values(values):
        """a linked list of ListNode holding values, in order"""
    '''
)
_WALK = _d(
    """
    def check(candidate):
        kept = []
        node = candidate(range(300))
        while node is not None:
            kept.append(node)
            node = node.next
        assert [n.value for n in kept] == list(range(300))
        assert type(kept[0]) is ListNode and type(kept[-1]) is type(kept[0])
        assert type(kept[7]).__name__ == "ListNode"
    """
)
_FORMATTER = _d(
    '''
    import logging

    class Masking(logging.Formatter):
        """a Formatter that shows only the last four digits of a run of 12+"""

        def format(self, record):
            pass
    '''
)
_FORMATTER_TEST = _d(
    """
    import io
    import logging

    def check(candidate):
        f = candidate("%(levelname)s %(message)s")
        assert isinstance(f, logging.Formatter) and not isinstance(f, logging.Filter)
        record = logging.makeLogRecord({"levelname": "INFO", "msg": "card %s", "args": ("4111111111111111",)})
        assert f.format(record) == "INFO card ****1111"
        h = logging.StreamHandler(io.StringIO())
        h.setFormatter(f)
        lg = logging.getLogger("identity.masking")
        lg.addHandler(h)
        lg.propagate = False
        lg.warning("pan=%s", "378282246310005")
        assert h.stream.getvalue() == "WARNING pan=****0005\\n"
    """
)
_MASK = (
    "    def format(self, record):\n"
    "        import re\n"
    "        text = super().format(record)\n"
    "        return re.sub(r'\\d{8,}(\\d{4})', lambda m: '****' + m.group(1), text)\n"
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "type() of the prompt's __slots__ nodes the candidate built": (
        _SLOTTED,
        _WALK,
        "from_values",
        "    head = None\n    for v in reversed(list(values)):\n        head = ListNode(v, head)\n    return head\n",
        "    head = None\n    for v in values:\n        head = ListNode(v, head)\n    return head\n",
    ),
    "type() of the prompt's plain class, beside type() of the test's values": (
        'class Point:\n    def __init__(self, x):\n        self.x = x\n\n\ndef make(x):\n    """Point(x)"""\n',
        _d(
            """
            def check(candidate):
                p = candidate(3)
                assert type(p) is Point and type(p) == type(Point(1)) and p.x == 3
                assert type(3) is int and type(int) is type and isinstance(Point, type)
                assert isinstance(int, type) and issubclass(bool, int) and type("T", (), {}).__name__ == "T"
            """
        ),
        "make",
        "    return Point(x)\n",
        "    return Point(x + 1)\n",
    ),
    "isinstance of the standard class the prompt's class derives from": (
        _FORMATTER,
        _FORMATTER_TEST,
        "Masking",
        _MASK,
        _MASK.replace("(\\d{4})", "(\\d{3})"),
    ),
    "a log record the test builds, read by the candidate's function": (
        'import logging\n\n\ndef line(record):\n    """LEVEL name: message"""\n',
        _d(
            """
            import logging

            def check(candidate):
                r = logging.makeLogRecord({"name": "db", "levelname": "ERROR", "msg": "%d rows", "args": (3,)})
                assert candidate(r) == "ERROR db: 3 rows"
            """
        ),
        "line",
        "    return f'{record.levelname} {record.name}: {record.getMessage()}'\n",
        "    return f'{record.levelname} {record.name}: {record.msg}'\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, strict reason)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "the test's id() of nodes it built with the prompt's class": (
        'class Node:\n    def __init__(self, n):\n        self.n = n\n\n\ndef by_id(nodes):\n    """{id(node): node.n}"""\n',
        "def check(candidate):\n    a, b = Node(1), Node(2)\n    t = candidate([a, b])\n    assert t[id(a)] == 1 and t[id(b)] == 2\n",
        "by_id",
        "    return {id(x): x.n for x in nodes}\n",
        "failed",
        "passed",
        "strict scoring: the test took id() of the candidate's object",
    ),
    "the candidate's id() of the test's own objects": (
        'def by_id(items):\n    """{id(item): item.n}"""\n',
        "class Item:\n    def __init__(self, n):\n        self.n = n\ndef check(candidate):\n    a = Item(1)\n    t = candidate([a])\n    assert t.get(id(a)) == 1\n",
        "by_id",
        "    return {id(x): x.n for x in items}\n",
        "failed",
        "passed",
        "strict scoring: the candidate's code took id() of the test's object",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("identity"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_class_identity_is_judged_as_the_single_program_judges_it(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_identity_limits_carry_their_reason(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
