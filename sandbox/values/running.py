"""Containers of calls still running, in step at each callback.

In one program the candidate's call that appends to the test's list
``journal`` and then calls the test's callback, which reads ``journal`` by
its own name, shows the callback the new entry. On the channel the
candidate's code changes its copy (`opened`), written back when the call
returns. So at each request of the child's to the test's code while calls
of the test's are open, the child names their containers kept in step and
sends what its code changed in them since the sides last agreed
(`outgoing`); the verifier refills its own (`take`), and with its answer
sends what the test's code changed in them meanwhile (`answer`), which
the child refills in its copies (`take_answer`). Only while those
containers hold at most `kept.IN_STEP` items in all: comparing them costs
about 20 ns an item on each side at each callback; past it they are in
step at the call's end only. Containers both sides hold (`kept`) are left
to that table.

A container in the other side's copy that is one of its own (the test's
dict the candidate appended) crosses as that one (`opened`'s ``["o", ...]``);
the test's own containers that its code put in one cross as copies.

Imports only the standard library, `wire`, `kept` and `opened`.
"""

from __future__ import annotations

from typing import Any

from . import kept, wire
from .opened import Frame

_type = type
_id = id
_len = len
_int = int
_list = list
_MUTABLE = frozenset(wire.MUTABLE)
Steps = list[tuple[int, list[int]]]
"""The open calls in step: each one's number and its containers' numbers."""


RESIZED_MOST = 256
"""Containers of calls past the bound whose size is looked at, at a callback."""
PAST = -1
"""The call number of a ``running`` item saying that a container of a call
past the bound (not in step) changed size since the call began."""


def in_step(frames: list[Frame], held: dict[int, int]) -> Steps:
    """The open calls' containers kept in step (all but the kept ones),
    outermost first, while they and their items number at most
    `kept.IN_STEP` in all (so the walk itself stops there);
    ``(PAST, [])`` last where a container of a call past that changed size."""
    out: Steps = []
    budget = kept.IN_STEP
    for f, frame in enumerate(frames):
        memo, numbers = frame.memo, []
        for j in range(frame.sent):
            v = memo[j]
            if _type(v) in _MUTABLE and _id(v) not in held:
                budget -= _len(v) + 1
                if budget < 0:
                    if _resized(frames[f:], held):
                        out.append((PAST, []))
                    return out
                numbers.append(j)
        if numbers:
            out.append((f, numbers))
    return out


def _resized(frames: list[Frame], held: dict[int, int]) -> bool:
    """Does one of the first `RESIZED_MOST` containers of ``frames`` hold
    more or fewer items than when its call began (its length against its
    snapshot's: no item compared)?"""
    most = RESIZED_MOST
    for frame in frames:
        memo, snaps = frame.memo, frame.snaps
        for j in range(frame.sent if snaps is not None else 0):
            v = memo[j]
            if _type(v) not in _MUTABLE or _id(v) in held:
                continue
            size = 2 * _len(v) if isinstance(v, dict) else _len(v)
            if _len(snaps[j]) != size:  # type: ignore[arg-type,index]
                return True
            most -= 1
            if most <= 0:
                return False
    return False


def outgoing(frames: list[Frame], steps: Steps, codec: wire.Codec) -> list[Any]:
    """In the child, asking the test's code: the ``running`` of its
    `protocol.Op` (see there) for the calls ``steps`` (`in_step`); from a
    call whose containers do not encode now on, they are left to their
    calls' ends, as past the bound (the codec numbers alike on both sides
    only what it sent whole)."""
    out: list[Any] = []
    for f, numbers in steps:
        try:
            out.append([f, numbers, [] if f == PAST else moved(frames[f], numbers, codec)])
        except wire.NotData:
            break
    return out


def moved(frame: Frame, numbers: list[int], codec: wire.Codec) -> list[Any]:
    """``[j, contents]`` of the containers ``numbers`` of ``frame`` that
    changed since the sides last agreed; that is now what they agree on."""
    memo, snaps = frame.memo, frame.snaps
    if snaps is None:
        return []
    objects = [memo[j] for j in numbers]
    changed = [numbers[i] for i in wire.changed(objects, [snaps[j] for j in numbers])]
    out = [[j, codec.contents(memo[j], 0)] for j in changed]
    agree(frame, changed)
    return out


def agree(frame: Frame, numbers: list[int]) -> None:
    """What the containers ``numbers`` of ``frame`` hold now is agreed."""
    memo = frame.memo
    snaps: list[object] = _list(frame.snaps) if frame.snaps is not None else [None] * frame.sent
    for j, snap in zip(numbers, wire.snapshot([memo[j] for j in numbers]), strict=True):
        snaps[j] = snap
    frame.snaps = snaps


def take(frames: list[Frame], items: object, codec: wire.Codec) -> Steps:
    """In the verifier: refill its own containers of its calls still running
    from the child's ``running`` (`outgoing`); the calls in step. Raises
    `wire.NotData` on anything malformed."""
    if _type(items) is not _list:
        raise wire.NotData("malformed running calls")
    steps: Steps = []
    for item in items:
        if _type(item) is not _list or _len(item) != 3 or _type(item[0]) is not _int:
            raise wire.NotData("malformed running calls")
        f, numbers, changes = item
        if f == PAST:
            steps.append((PAST, []))
            continue
        if not 0 <= f < _len(frames) or _type(numbers) is not _list:
            raise wire.NotData("an unknown running call")
        frame = frames[f]
        for j in numbers:
            if (
                _type(j) is not _int
                or not 0 <= j < frame.sent
                or _type(frame.memo[j]) not in _MUTABLE
            ):
                raise wire.NotData("an unknown container of a running call")
        refilled = refill(frame, changes, codec)
        snaps = frame.snaps  # agreed: what was refilled, and what had no snapshot yet
        agree(frame, [j for j in numbers if snaps is None or snaps[j] is None or j in refilled])
        steps.append((f, numbers))
    return steps


def answer(frames: list[Frame], steps: Steps, codec: wire.Codec) -> list[Any]:
    """In the verifier, answering: the `protocol.Reply`'s ``running``."""
    out = []
    for f, numbers in steps:
        if 0 <= f < _len(frames):
            changes = moved(frames[f], numbers, codec)
            if changes:
                out.append([f, changes])
    return out


def take_answer(frames: list[Frame], steps: Steps, items: object, codec: wire.Codec) -> None:
    """In the child: refill its copies from the verifier's answer (`answer`),
    for the calls it named in step alone. Raises `wire.NotData` on anything
    malformed."""
    if not items:
        return
    if _type(items) is not _list:
        raise wire.NotData("malformed running calls")
    named = dict(steps)
    for item in items:
        if _type(item) is not _list or _len(item) != 2 or _type(item[1]) is not _list:
            raise wire.NotData("malformed running calls")
        if _type(item[0]) is not _int or item[0] < 0 or item[0] not in named:
            raise wire.NotData("an unknown running call")
        frame = frames[item[0]]
        numbers = [x[0] for x in item[1] if _type(x) is _list and _len(x) == 2]
        if any(j not in named[item[0]] for j in numbers):
            raise wire.NotData("an unknown container of a running call")
        refill(frame, item[1], codec)
        agree(frame, numbers)


def refill(frame: Frame, changes: object, codec: wire.Codec) -> set[int]:
    """Refill ``frame``'s containers from ``[[j, contents], ...]``; their numbers."""
    if _type(changes) is not _list:
        raise wire.NotData("malformed running calls")
    done: set[int] = set()
    for change in changes:
        if _type(change) is not _list or _len(change) != 2 or _type(change[0]) is not _int:
            raise wire.NotData("malformed running calls")
        j = change[0]
        if not 0 <= j < frame.sent or _type(frame.memo[j]) not in _MUTABLE:
            raise wire.NotData("an unknown container of a running call")
        codec.refill(frame.memo[j], change[1])
        done.add(j)
    return done
