"""Containers of a call still running that one side's code changes while
the other side's code reads them by its own reference, judged as the
single program judges them: the candidate appends to the test's list and
then calls the test's callback, which reads that list through its
closure; the test's callback adds work to the test's queue the candidate
is draining; the candidate fills the test's dict and the callback reads
it. ``LIMITS``: past the items such containers are brought in step for at
each callback, a change the callback does not see is named.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_JOURNAL = (
    "def apply_batch(journal, batch, on_progress):\n"
    '    """Append each entry of batch with a numeric "amount" to journal (in place);'
    ' after each, call on_progress(count so far). Returns the count."""\n'
)
_JOURNAL_RIGHT = (
    "    n = 0\n    for e in batch:\n        if isinstance(e.get('amount'), (int, float)):\n"
    "            journal.append(e)\n            n += 1\n            on_progress(n)\n"
    "    return n\n"
)
_JOURNAL_WRONG = (
    "    n = 0\n    for e in batch:\n        if isinstance(e.get('amount'), (int, float)):\n"
    "            n += 1\n            on_progress(n)\n            journal.append(e)\n"
    "    return n\n"
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "the candidate appends to the test's list, the callback reads it by its closure": (
        _JOURNAL,
        _d(
            """
            def check(candidate):
                journal = [{"account": "opening", "amount": 0}]
                seen = []
                def progress(done):
                    seen.append((done, len(journal), journal[-1]["account"]))
                batch = [{"account": "cash", "amount": 10}, {"account": "bad"},
                         {"account": "sales", "amount": -1.5}]
                assert candidate(journal, batch, progress) == 2
                assert seen == [(1, 2, "cash"), (2, 3, "sales")], seen
                assert journal[1] is batch[0] and journal[2] is batch[2]
            """
        ),
        "apply_batch",
        _JOURNAL_RIGHT,
        _JOURNAL_WRONG,
    ),
    "the test's callback adds work to the test's queue the candidate drains": (
        "def drain(queue, handle):\n"
        '    """Pop items from the front of queue (the caller\'s list) until it is empty,'
        ' calling handle(item) on each; the list of items handled."""\n',
        _d(
            """
            def check(candidate):
                queue = [3, 1]
                def handle(n):
                    if n > 1:
                        queue.append(n - 1)
                assert candidate(queue, handle) == [3, 1, 2, 1]
                assert queue == []
            """
        ),
        "drain",
        "    done = []\n    while queue:\n        x = queue.pop(0)\n        handle(x)\n"
        "        done.append(x)\n    return done\n",
        "    done = []\n    for x in list(queue):\n        handle(x)\n        done.append(x)\n"
        "    queue.clear()\n    return done\n",
    ),
    "the candidate fills the test's dict, the callback reads it by its closure": (
        "def tally(counts, words, report):\n"
        '    """Count each word into counts (the caller\'s dict); after each new word'
        ' (first seen) call report(word)."""\n',
        _d(
            """
            def check(candidate):
                counts = {}
                sizes = []
                def report(word):
                    sizes.append((word, len(counts), counts.get(word)))
                candidate(counts, ["a", "b", "a", "c"], report)
                assert sizes == [("a", 1, 1), ("b", 2, 1), ("c", 3, 1)], sizes
                assert counts == {"a": 2, "b": 1, "c": 1}
            """
        ),
        "tally",
        "    for w in words:\n        new = w not in counts\n        counts[w] = counts.get(w, 0) + 1\n"
        "        if new:\n            report(w)\n",
        "    for w in words:\n        new = w not in counts\n        if new:\n            report(w)\n"
        "        counts[w] = counts.get(w, 0) + 1\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "a 5,000-item list the candidate appends to before the callback reads it": (
        _JOURNAL,
        _d(
            """
            def check(candidate):
                journal = [{"account": "old", "amount": 0}] * 5000
                seen = []
                def progress(done):
                    seen.append(len(journal))
                assert candidate(journal, [{"account": "cash", "amount": 1}], progress) == 1
                assert seen == [5001], seen
            """
        ),
        "apply_batch",
        _JOURNAL_RIGHT,
        "failed",
        "passed",
        "which does not see that change: the call's containers hold more than 4096 items",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("running"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_containers_of_running_calls_are_judged_as_one_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_past_the_bound_a_change_the_callback_does_not_see_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
