"""Shapes whose cost in strict scoring grew with the size of the candidate's
object times the number of calls, judged within the default budget as the
single program judges them: an object holding a large public dict of its
own objects that the test calls thousands of times (a read of a method is
not a read of the fields of everything the object reaches), and a deep tree
whose nodes link to their parents, walked down (each new node's batch of
fields leaves out the way back up, which the verifier already has).

The figures live in ``bench/``; here only the verdicts."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, score_both

from aioeval.types import CandidateResult

_REGISTRY = (
    "class Entry:\n    def __init__(self, value):\n        self.value = value\n\n\n"
    "class Registry:\n"
    '    """put(key, value) stores; get(key) -> value or None; size() -> count.'
    ' Keeps at most `limit` keys, dropping the oldest."""\n'
    "    def __init__(self, limit):\n        self.limit = limit\n        self.table = {}\n"
    "        self.order = []\n"
)
_RIGHT = (
    "    def put(self, key, value):\n"
    "        if key not in self.table:\n            self.order.append(key)\n"
    "        self.table[key] = Entry(value)\n"
    "        while len(self.order) > self.limit:\n"
    "            del self.table[self.order.pop(0)]\n"
    "    def get(self, key):\n        found = self.table.get(key)\n"
    "        return None if found is None else found.value\n"
    "    def size(self):\n        return len(self.table)\n"
)
_WRONG = (
    "    def put(self, key, value):\n        self.table[key] = Entry(value)\n"
    "    def get(self, key):\n        found = self.table.get(key)\n"
    "        return None if found is None else found.value\n"
    "    def size(self):\n        return len(self.table)\n"
)
# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "thousands of calls of an object that holds a large public dict": (
        _REGISTRY,
        _d(
            """
            def check(candidate):
                r = Registry(1000)
                for i in range(3000):
                    r.put(i, i * i)
                assert r.size() == 1000
                assert r.get(2500) == 2500 ** 2 and r.get(1999) is None
            """
        ),
        "Registry",
        _RIGHT,
        _WRONG,
    ),
    "a 1,500-deep tree whose nodes link to their parents, walked down and up": (
        _d(
            """
            class Dept:
                def __init__(self, code):
                    self.code = code
                    self.parent = None
                    self.subs = []


            def org_chart(pairs):
                \"\"\"pairs: (code, parent code or None), parents first. Link
                each Dept to its parent and list it in the parent's subs;
                return the root.\"\"\"
            """
        ),
        _d(
            """
            def check(candidate):
                pairs = [("d0", None)] + [(f"d{i}", f"d{i - 1}") for i in range(1, 1500)]
                root = candidate(pairs + [("x", "d1499")])
                node = root
                while node.subs:
                    node = node.subs[0]
                assert node.code == "x"
                up = 0
                while node.parent is not None:
                    node, up = node.parent, up + 1
                assert up == 1500 and node is root
            """
        ),
        "org_chart",
        "    made = {}\n    for code, parent in pairs:\n        made[code] = d = Dept(code)\n"
        "        if parent is not None:\n            d.parent = made[parent]\n"
        "            made[parent].subs.append(d)\n    return made[pairs[0][0]]\n",
        "    made = {}\n    for code, parent in pairs:\n        made[code] = d = Dept(code)\n"
        "        if parent is not None:\n            d.parent = made[parent]\n"
        "            made[pairs[0][0]].subs.append(d)\n    return made[pairs[0][0]]\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("cost"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_large_objects_are_judged_within_the_budget(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
