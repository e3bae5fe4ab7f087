"""Red-team findings on the surfaces strict scoring gained with datetime
values, exception hierarchies, printed output and the child's requests,
kept as tests (the pattern of ``test_handle_reads``). Each program is the
candidate's whole child: it may patch the harness in its own process, so
its flags, reads and replies are its to choose."""

from __future__ import annotations

import pytest
from test_handle_reads import check_strict

# The child's description of its objects, replaced by the candidate's own
# functions (``described`` is the module with ``as_base`` and ``flags``).
PATCH = """
import sys
def _described():
    return [m for m in list(sys.modules.values())
            if hasattr(m, "as_base") and hasattr(m, "exception_tree")]
def _patch_base(fn):
    for m in _described():
        m.as_base = fn
def _patch_flags(fn):
    for m in _described():
        old = m.flags
        m.flags = lambda v, old=old: fn(v, old(v))
"""

# A value read again after the candidate ran (a later call) is answered
# with StopIteration: a comparison inside map/filter then ends the
# iteration, and the test's all()/filter() sees nothing wrong.
STOP_ON_REREAD = (
    PATCH
    + """
class B(int):
    pass
_reads = [0]
def _answer(v):
    _reads[0] += 1
    if _reads[0] > 2:
        raise StopIteration
    return int.__int__(v)
_patch_base(_answer)
def add_one(x):
    return B(x + 100)   # wrong
"""
)

MAP_TEST = """
import operator
def check(candidate):
    results = [candidate(x) for x in (1, 2)]
    assert all(map(operator.eq, results, [2, 3]))
"""

FILTER_TEST = """
def check(candidate):
    got = [candidate(x) for x in (1, 2)]
    bad = list(filter(lambda p: p[0] != p[1], zip(got, [2, 3])))
    assert not bad, bad
"""

# Flags claimed for a builtin subclass: "always true" for a 0, "identity
# hash" for a 7; the builtin value decides both.
ALWAYS_TRUE_ZERO = (
    PATCH
    + """
class B(int):
    pass
_patch_flags(lambda v, f: f | 32 if type(v) is B else f)
def is_odd(x):
    return B(0)
"""
)

NOT_ODD_TEST = """
def check(candidate):
    assert not candidate(4)
"""

IDENTITY_HASH = (
    PATCH
    + """
class B(int):
    pass
_patch_flags(lambda v, f: f | 16 if type(v) is B else f)
def pick(xs):
    return B(7)           # wrong: 7 is excluded
"""
)

EXCLUDED_TEST = """
def check(candidate):
    assert candidate([7, 8]) not in {7}
"""

# A program's subclass of a BaseException-only builtin: in one program the
# test's ``except Exception`` does not catch it.
EXIT_SUBCLASS = """
class Stop({base}):
    pass
def safe_div(a, b):
    raise Stop("no")      # wrong: should return a / b
"""

TOLERANT_TEST = """
def check(candidate):
    try:
        r = candidate(4, 2)
    except Exception:
        r = 2.0
    assert r == 2.0
"""

# A value the verifier reads while it binds the program's names, answered
# with an exit, an exception or the child's end: the verifier must judge
# the answer, not die.
BIND_READ = (
    """
import os
def _how(v):
{how}
"""
    + PATCH
    + """
for m in _described():
    old = m.base
    m.base = lambda v, old=old: "int" if callable(v) and not isinstance(v, type) else old(v)
_patch_base(_how)
def f(x):
    return x
"""
)

# str() of the exception that failed the test runs the candidate's code
# (its args hold a handle), after the test has ended.
REASON_TEXT = """
class Msg:
    def __str__(self):
        {how}
def f(x):
    raise ValueError(Msg())
"""

WRONG_TEST = """
def check(candidate):
    assert candidate(1) == 2
"""


@pytest.mark.parametrize("test", [MAP_TEST, FILTER_TEST], ids=["map", "filter"])
def test_a_read_answered_with_stop_iteration_fails(test: str) -> None:
    status, reason = check_strict(STOP_ON_REREAD, test, "add_one")
    assert status == "failed" and "instead of giving the value" in reason, reason


def test_always_true_flag_does_not_decide_a_builtin_value_s_truth() -> None:
    status, reason = check_strict(ALWAYS_TRUE_ZERO, NOT_ODD_TEST, "is_odd")
    assert status == "passed", reason


def test_identity_hash_flag_does_not_decide_a_builtin_value_s_hash() -> None:
    status, reason = check_strict(IDENTITY_HASH, EXCLUDED_TEST, "pick")
    assert status == "failed", reason


@pytest.mark.parametrize("base", ["KeyboardInterrupt", "SystemExit", "GeneratorExit"])
def test_a_subclass_of_an_exit_is_not_caught_as_an_exception(base: str) -> None:
    status, reason = check_strict(EXIT_SUBCLASS.format(base=base), TOLERANT_TEST, "safe_div")
    assert status == "failed" and "Stop" in reason, reason


@pytest.mark.parametrize(
    "how", ["    raise KeyboardInterrupt", "    raise ValueError", "    os._exit(0)"]
)
def test_a_read_while_binding_names_fails_the_answer_not_the_verifier(how: str) -> None:
    status, reason = check_strict(BIND_READ.format(how=how), WRONG_TEST, "f")
    assert status == "failed" and "names could not be read" in reason, reason


@pytest.mark.parametrize("how", ["raise KeyboardInterrupt", "return 5"])
def test_an_exception_s_text_that_fails_keeps_the_verdict(how: str) -> None:
    status, reason = check_strict(REASON_TEXT.format(how=how), WRONG_TEST, "f")
    assert status == "failed" and reason.startswith("ValueError"), reason


# The program redefines the prompt's class: its constructor ignores the
# arguments, so the test's expected value is built as wrong as the answer
# (and the prompt's own __eq__, which strict uses, then agrees).
POINT_PROMPT = '''
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def __eq__(self, o):
        return isinstance(o, Point) and (self.x, self.y) == (o.x, o.y)
def midpoint(a, b):
    """The midpoint of a and b."""
'''

POINT_TEST = """
def check(candidate):
    assert candidate(Point(0, 0), Point(2, 2)) == Point(1, 1)
    assert candidate(Point(0, 0), Point(4, 2)) == Point(2, 1)
"""

POINT_REDEFINED = (
    POINT_PROMPT
    + """    return Point(0, 0)
class Point:
    def __init__(self, x, y):
        self.x = 0
        self.y = 0
    def __eq__(self, o):
        return False
"""
)

POINT_HONEST = POINT_PROMPT + "    return Point((a.x + b.x) / 2, (a.y + b.y) / 2)\n"


def test_a_redefined_prompt_class_does_not_build_the_expected_value() -> None:
    status, reason = check_strict(POINT_REDEFINED, POINT_TEST, "midpoint", POINT_PROMPT)
    assert status == "failed" and "builds objects differently" in reason, reason
    status, reason = check_strict(POINT_HONEST, POINT_TEST, "midpoint", POINT_PROMPT)
    assert status == "passed", reason


# Honest programs whose prompt classes build prompt objects of their own
# (compared by attributes, through lists and dicts): the guard agrees.
NESTED_PROMPT = '''
class Node:
    def __init__(self, val):
        self.val = val
        self.next = None
class LinkedList:
    def __init__(self, vals=()):
        self.head = Node(None)
        self.leaves = [Node(v) for v in vals]
        self.index = {v: Node(v) for v in vals}
def push(lst, v):
    """push v at the front of lst, return lst"""
'''

NESTED_HONEST = (
    NESTED_PROMPT
    + """    n = Node(v)
    n.next = lst.head.next
    lst.head.next = n
    return lst
"""
)

NESTED_TEST = """
def check(candidate):
    r = candidate(LinkedList([1, 2]), 3)
    assert r.head.next.val == 3 and len(r.leaves) == 2
"""


def test_prompt_objects_built_by_prompt_classes_agree_by_their_attributes() -> None:
    status, reason = check_strict(NESTED_HONEST, NESTED_TEST, "push", NESTED_PROMPT)
    assert status == "passed", reason


# The same through a factory of the prompt's class (``Point.of``).
FACTORY_PROMPT = '''
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    @classmethod
    def of(cls, pair):
        return cls(pair[0], pair[1])
    def __eq__(self, o):
        return isinstance(o, Point) and (self.x, self.y) == (o.x, o.y)
def midpoint(a, b):
    """The midpoint of a and b."""
'''

FACTORY_REDEFINED = (
    FACTORY_PROMPT
    + """    return Point(0, 0)
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    @classmethod
    def of(cls, pair):
        return cls(0, 0)
    def __eq__(self, o):
        return False
"""
)

FACTORY_HONEST = FACTORY_PROMPT + "    return Point((a.x + b.x) / 2, (a.y + b.y) / 2)\n"

FACTORY_TEST = """
def check(candidate):
    assert candidate(Point.of((0, 0)), Point.of((2, 2))) == Point.of((1, 1))
"""


def test_a_redefined_prompt_class_factory_does_not_build_the_expected_value() -> None:
    status, reason = check_strict(FACTORY_REDEFINED, FACTORY_TEST, "midpoint", FACTORY_PROMPT)
    assert status == "failed" and "Point.of builds objects differently" in reason, reason
    status, reason = check_strict(FACTORY_HONEST, FACTORY_TEST, "midpoint", FACTORY_PROMPT)
    assert status == "passed", reason


# The child says the program's Point is an exception class: its stand-in
# (built in the verifier, unguarded) made the test's expected Point, empty,
# and the prompt's own __eq__ (``vars(self) == vars(o)``) agreed with the
# program's empty object.
VARS_PROMPT = '''
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def __eq__(self, o):
        return vars(self) == vars(o)
def midpoint(a, b):
    """The midpoint of a and b."""
'''

POINT_AS_EXCEPTION = (
    VARS_PROMPT
    + """    return _P()
class _P:
    def __eq__(self, o):
        return True
_P.__qualname__ = "Point"
"""
    + PATCH
    + """
_patch_flags(lambda v, f: f | 64 if v is Point else f)
"""
)


def test_a_prompt_class_is_not_bound_to_an_exception_stand_in() -> None:
    status, reason = check_strict(POINT_AS_EXCEPTION, POINT_TEST, "midpoint", VARS_PROMPT)
    assert status == "failed" and "Point is not a class" in reason, reason


# The program's Point carries an instance attribute named like the
# prompt's method that the prompt's __eq__ calls: rebuilt as the prompt's
# class, the candidate's function would answer the comparison.
KEY_PROMPT = '''
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def key(self):
        return (self.x, self.y)
    def __eq__(self, o):
        return isinstance(o, Point) and self.key() == o.key()
def midpoint(a, b):
    """The midpoint of a and b."""
'''

KEY_SHADOWED = (
    KEY_PROMPT
    + """    p = Point(0, 0)
    want = ((a.x + b.x) / 2, (a.y + b.y) / 2)
    p.key = lambda: want
    return p
"""
)

SLOTS_PROMPT = '''
from dataclasses import dataclass
@dataclass(slots=True)
class P:
    x: int
    y: int = 0
    tag = "p"
def mirror(p):
    """P(p.y, p.x)"""
'''


def test_an_attribute_shadowing_a_prompt_method_is_not_compared_by_it() -> None:
    status, reason = check_strict(KEY_SHADOWED, POINT_TEST, "midpoint", KEY_PROMPT)
    assert status == "failed" and "only the candidate's own code" in reason, reason
    honest = SLOTS_PROMPT + "    return P(p.y, p.x)\n"
    test = "def check(c):\n    assert c(P(1, 2)) == P(2, 1)\n"
    status, reason = check_strict(honest, test, "mirror", SLOTS_PROMPT)
    assert status == "passed", reason


# An object of the prompt's class kept on the class (``Point.ORIGIN``): the
# program's own, redefined, was the test's expected value.
ORIGIN_PROMPT = '''
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def __eq__(self, o):
        return isinstance(o, Point) and (self.x, self.y) == (o.x, o.y)
Point.ORIGIN = Point(0, 0)
def reflect(p):
    """The point reflected through the origin."""
'''

ORIGIN_REDEFINED = (
    ORIGIN_PROMPT
    + """    return Point(5, 5)
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def __eq__(self, o):
        return False
Point.ORIGIN = Point(5, 5)
"""
)

ORIGIN_TEST = """
def check(candidate):
    assert candidate(Point(0, 0)) == Point.ORIGIN
    assert candidate(Point(1, 2)) == Point(-1, -2)
"""


def test_a_redefined_prompt_class_constant_is_not_the_expected_value() -> None:
    status, reason = check_strict(ORIGIN_REDEFINED, ORIGIN_TEST, "reflect", ORIGIN_PROMPT)
    assert status == "failed" and "Point.ORIGIN differs" in reason, reason
    honest = ORIGIN_PROMPT + "    return Point(-p.x, -p.y)\n"
    status, reason = check_strict(honest, ORIGIN_TEST, "reflect", ORIGIN_PROMPT)
    assert status == "passed", reason
