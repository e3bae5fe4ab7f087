"""A child that asks the verifier to hold a field of the test's object
(`values.lent`) gets only what a read of the object's fields gives: a
hostile child naming a private attribute, or an attribute of an object
that is not a plain instance of the test's class, cannot have the
verifier keep it in step with a container of its own and so rewrite it."""

from __future__ import annotations

import pytest
from test_handle_reads import check_strict

# The candidate's function finds its process's channel end and asks the
# verifier to hold ``o.<name>``; where the verifier says it holds it as a
# new container, the child holds a forged list under that number, which
# its answer's in-step changes would write into the test's container.
FORGER = """
import sys
def forge(o, name):
    f = sys._getframe()
    peer = None
    while f is not None:
        cand = f.f_locals.get("peer")
        if cand is not None and hasattr(cand, "kept"):
            peer = cand
            break
        f = f.f_back
    got = peer._ask(-2, "keepfield", [[o, name]])
    if got and got[0] == len(peer.kept.objects):
        peer.kept.add(["forged"])
        peer.kept.snaps[-1] = []
    return list(got)
"""

SETUP = """
class Box:
    def __init__(self):
        self._hidden = ["orig"]
        self.shown = ["orig"]
def check(candidate):
    b = Box()
    got = candidate(b, NAME)
    assert b._hidden == ["orig"] and b.shown == EXPECTED, (got, b._hidden, b.shown)
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [("_hidden", ["orig"]), ("shown", ["forged"])],
)
def test_a_child_joins_only_a_public_field_of_the_tests_plain_object(
    name: str, expected: list[str]
) -> None:
    setup = SETUP.replace("NAME", repr(name)).replace("EXPECTED", repr(expected))
    status, reason = check_strict(FORGER, setup, "forge")
    assert status == "passed", reason
