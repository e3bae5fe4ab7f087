"""The containers of calls still running, brought in step at a callback
(`sandbox/values/running.py`): both sides' halves agree, and what the
child sends is validated before the verifier refills anything."""

from __future__ import annotations

from typing import Any

import pytest

from aioeval.sandbox.values import kept, opened, running, wire


def _codec() -> wire.Codec:
    def no_reference(_: object) -> Any:
        raise wire.NotData("no references here")

    return wire.Codec(no_reference, no_reference)


def _frame(*containers: Any) -> opened.Frame:
    memo = list(containers)
    return opened.Frame(memo, {id(c): n for n, c in enumerate(memo)}, wire.snapshot(memo))


def test_what_one_side_changed_is_refilled_on_the_other_and_back() -> None:
    child = _frame([1], {"a": 1})
    test = _frame([1], {"a": 1})
    test.snaps = None  # the verifier snapshots at the first callback
    steps = running.in_step([child], {})
    assert steps == [(0, [0, 1])]
    child.memo[0].append(2)
    sent = running.outgoing([child], steps, _codec())
    taken = running.take([test], sent, _codec())
    assert test.memo[0] == [1, 2] and taken == steps
    test.memo[1]["b"] = 2  # the test's callback
    answer = running.answer([test], taken, _codec())
    running.take_answer([child], steps, answer, _codec())
    assert child.memo[1] == {"a": 1, "b": 2}
    assert running.outgoing([child], steps, _codec()) == [[0, [0, 1], []]]


def test_past_the_bound_only_a_change_of_size_is_reported() -> None:
    big = _frame(list(range(kept.IN_STEP)))
    assert running.in_step([big], {}) == []
    big.memo[0].append(-1)
    assert running.in_step([big], {}) == [(running.PAST, [])]


@pytest.mark.parametrize(
    "items",
    [
        "x",
        [[0]],
        [[5, [0], []]],
        [[0, [7], []]],
        [[0, ["0"], []]],
        [[0, [0], [[3, ["l", []]]]]],
        [[0, [0], [[0, ["z", 1]]]]],
        [[0, [0], "no"]],
    ],
)
def test_malformed_running_calls_are_not_data(items: Any) -> None:
    with pytest.raises(wire.NotData):
        running.take([_frame([1])], items, _codec())


@pytest.mark.parametrize(
    ("steps", "answer"),
    [
        ([], [[0, [[0, ["l", [2]]]]]]),
        ([(0, [0])], [[-1, []]]),
        ([(0, [0])], [[0, [[5, ["l", []]]]]]),
    ],
)
def test_the_child_takes_answers_only_for_calls_it_named(steps: Any, answer: Any) -> None:
    frame = _frame([1])
    with pytest.raises(wire.NotData):
        running.take_answer([frame], steps, answer, _codec())
    assert frame.memo[0] == [1]
