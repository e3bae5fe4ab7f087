"""Red-team findings on how the test's names resolve to the program's,
kept as tests: a name the test builds its expected values with must not be
the candidate's to answer for, whether the prompt defines it or imports it."""

from __future__ import annotations

import pytest
from test_handle_reads import check_strict

PROMPT = '''from fractions import Fraction


def half(x: int) -> Fraction:
    """x / 2 as a Fraction."""
'''

TEST = """
def check(candidate):
    assert candidate(3) == Fraction(3, 2)
    assert candidate(5) == Fraction(5, 2)
"""

# Wrong answers (0 for every input) that redefine the class the prompt
# imports, so that the test's own Fraction(3, 2) is 0 too.
AS_CLASS = """
class Fraction(int):
    def __new__(cls, *args):
        return int.__new__(cls, 0)
"""
AS_FUNCTION = """
def Fraction(*args):
    return 0
"""
AS_EXCEPTION = """
class Fraction(Exception):
    pass
"""
WRONG_BODY = "    return 0\n\n"


@pytest.mark.parametrize(
    "shadow", [AS_CLASS, AS_FUNCTION, AS_EXCEPTION], ids=["class", "function", "exception"]
)
def test_a_redefined_prompt_import_does_not_build_the_expected_value(shadow: str) -> None:
    status, reason = check_strict(PROMPT + WRONG_BODY + shadow, TEST, "half", PROMPT)
    assert status == "failed" and "strict scoring" in reason, reason


def test_a_program_that_keeps_the_prompt_import_is_judged_by_it() -> None:
    status, reason = check_strict(PROMPT + "    return Fraction(x, 2)\n", TEST, "half", PROMPT)
    assert status == "passed", reason
