"""A data test's inputs in one round trip: the candidate's answers as it computes them.

Tests whose inputs are data (EvalPlus's parts, LiveCodeBench's and the
io-tests' lists) call the candidate once per input and compare each answer
with its expected output. Asked one call at a time, every input is a round
trip between the verifier and the child. `answers` sends all the inputs at
once (a ``map`` request); the child calls the function on each in order and
sends each answer as soon as it has it, and the test reads them in order
with ``next``, each under its own time limit (`timers.within` around the
``next``, so a limit runs from the previous answer). The comparison stays
the test's, in this process: an answer is a value like any call's result,
and an answer the child sends out of turn is only a wrong answer of its own.

A test finds the function under `MAP`; a test that runs where it is not
bound (official scoring's single program) calls the function itself. Once a
check has decided, the answers it has not read tell the verifier to stop
the child (`protocol.CheckResult.stop`) rather than let it compute them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import protocol
from ..values import wire
from .handles import Handle
from .session import Session

MAP = "__aioeval_map__"
"""The name under which a test finds `answers` (never the candidate's to bind)."""

MAX_INPUTS = 1_000_000
"""Most inputs one request carries (a frame is capped in bytes as well)."""


class Answers:
    """The child's answers to ``calls``, in order: ``next`` returns one
    (raises what the candidate's code raised for it), and the iterator goes
    on past an answer that raised.

    The inputs go in as few requests as the child's frame cap allows
    (`protocol.MAX_FRAME`): a part whose inputs are larger in all is split,
    and each further request is sent once the answers to the one before
    are read (sending it sooner could leave both ends blocked writing)."""

    def __init__(
        self, talk: Session, ref: int, encoded: tuple[list[object], list[tuple[wire.Codec, int]]]
    ) -> None:
        self.talk, self.ref = talk, ref
        payloads, self.pending = encoded
        self.pending.reverse()
        self.unsent = [payloads]
        self.asked = 0
        """Answers of the requests sent that are still to be read."""
        talk.epoch += 1
        talk.hand_over_world()  # once: the stream's inputs are one request's
        talk.unread += len(payloads)
        _streams.append(self)
        self._ask_next(talk.child_random())  # the child starts on the inputs at once

    def __iter__(self) -> Answers:
        return self

    def __next__(self) -> Any:
        if not self.pending:
            raise StopIteration
        if not self.asked:  # the answers to the last request are all read
            self._ask_next()
        reply = self.talk.reply()
        codec, sent = self.pending.pop()
        self.asked -= 1
        self.talk.unread -= 1
        return self.talk.answer(reply, codec, sent)

    def _ask_next(self, rand: object = None) -> None:
        """Send the next request: as many of the unsent inputs as fit in one
        frame, halving where they do not (one input alone goes as it is).
        The test's process state and ``random`` go with the first only, as
        they would with the whole part in one request."""
        batch = self.unsent.pop()
        while True:
            op = protocol.Op(ref=self.ref, op="map", args=batch, rand=rand)
            frame = protocol.encode_frame(op)
            if len(frame) <= protocol.MAX_FRAME or len(batch) == 1:
                break
            half = len(batch) // 2
            self.unsent.append(batch[half:])
            batch = batch[:half]
        self.talk.chan.send_frame(frame)
        self.asked = len(batch)


class OneByOne:
    """`Answers` for a function that is not the candidate's over a channel:
    each ``next`` calls it on the next input."""

    def __init__(self, fn: Callable[..., Any], calls: list[tuple[Any, ...]]) -> None:
        self.fn = fn
        self.calls = calls
        self.at = 0

    def __iter__(self) -> OneByOne:
        return self

    def __next__(self) -> Any:
        if self.at >= len(self.calls):
            raise StopIteration
        self.at += 1
        return self.fn(*self.calls[self.at - 1])


def answers(fn: Any, calls: Iterable[Sequence[Any]]) -> Answers | OneByOne:
    """The answers of ``fn`` to each input of ``calls`` (each a sequence of
    positional arguments), in order. Over the channel when ``fn`` is the
    candidate's plain function or method asked at the top level; else one
    call at a time, as the test would make them (a function whose answers
    the prompt's own must agree with, a callback's nested call)."""
    listed = [tuple(args) for args in calls]
    if (
        type(fn) is Handle
        and 0 < len(listed) <= MAX_INPUTS
        and fn._session.guards.get(fn._hid) is None
        and not fn._session.depth
        and not fn._session.unread
    ):
        encoded = _as_data(fn._session, listed)
        if encoded is not None:
            return Answers(fn._session, fn._hid, encoded)
    return OneByOne(fn, listed)


def _as_data(
    talk: Session, calls: list[tuple[Any, ...]]
) -> tuple[list[object], list[tuple[wire.Codec, int]]] | None:
    """Each call's request tree and the codec that numbered its containers;
    None if an input holds an object of the test's (a function, an
    instance): the candidate's use of it would run the test's code while
    the test reads earlier answers, so such inputs go one call at a time."""
    known = talk.lent
    payloads: list[object] = []
    codecs: list[tuple[wire.Codec, int]] = []
    for args in calls:
        codec = talk.codec()
        payloads.append(talk.request(codec, (args, None), call=True))
        codecs.append((codec, len(codec.memo)))
        if talk.lent != known:
            return None
    return payloads, codecs


def unread_left() -> bool:
    """Did the check end with answers the child would still compute? (A
    check has a process of its own, so the streams are this check's.)"""
    return any(stream.pending for stream in _streams)


_streams: list[Answers] = []
