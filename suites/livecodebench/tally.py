"""Per-test detail for problems whose tests are data (``partial_credit``):
the verifier runs `checks.tally_tests`, which goes on past a failure and
ends a failing answer with a tally; this module reads it back.

The tally begins with a secret the engine makes for each check and sends
only to the verifier (never to the candidate's process), so no reason the
candidate's code writes can pass for one: a reason without it leaves the
verdict as it is, without detail.
"""

import secrets
from collections.abc import Sequence

import msgspec

from aioeval.types import Failed, FailingTest, Passed, Verdict

SHOWN = 256
"""Characters of a failing test's input and expected output kept."""


def new_tag() -> str:
    return secrets.token_hex(16)


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def tallied(verdict: Verdict, tag: str, tests: Sequence[tuple[str, str]]) -> Verdict:
    """``verdict`` with tests passed, of all, and the first failing test,
    where the tally gives them; its reason is then the first failure's."""
    total = len(tests)
    if isinstance(verdict, Passed):
        return msgspec.structs.replace(verdict, tests_passed=total, tests_total=total)
    head, _, why = verdict.reason.partition("\n")
    words = head.split(" ")
    if not isinstance(verdict, Failed) or words[:2] != ["Tally:", tag] or len(words) != 4:
        return verdict
    passed, first = int(words[2]), int(words[3])
    if not (0 <= passed < total and 1 <= first <= total):
        return verdict
    test_input, expected = tests[first - 1]
    failing = FailingTest(index=first - 1, input=_cut(test_input), expected=_cut(expected))
    return msgspec.structs.replace(
        verdict, reason=why, tests_passed=passed, tests_total=total, first_failing=failing
    )
