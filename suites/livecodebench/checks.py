"""The trusted half of a LiveCodeBench-style problem: comparison rules and
the loop over its tests.

This module's source is sent as the test's setup (strict scoring: it runs in
the slot's verifier) or appended to the single program (official scoring),
so it imports only the standard library and avoids ``from __future__``.
The engine imports it too, so the rules are unit-tested as plain functions.

The rules are LiveCodeBench's (``lcb_runner/evaluation/testing_util.py``,
``grade_stdio`` and ``grade_call_based``): the first test that fails
decides; stdout is compared line by line after stripping, a line that
differs is compared again token by token as decimals when both sides parse;
a method's return value is compared with ``==`` after a tuple becomes a list.
"""

import decimal
import functools
import json
import signal
from collections.abc import Callable, Sequence
from typing import Any

_Within = Callable[..., Any]
SHOWN = 120
"""Characters of an output or expected value a failure's reason shows."""


class WrongAnswer(AssertionError):
    """A test's output or value is not the expected one."""


def _short(text: object) -> str:
    shown = repr(text)
    return shown if len(shown) <= SHOWN else shown[: SHOWN - 3] + "..."


def stripped_lines(text: str) -> list[str]:
    """The text without surrounding whitespace, split on newlines, each
    line stripped (so trailing spaces, ``\\r`` and final blank lines do not count)."""
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[decimal.Decimal] | None:
    try:
        return [decimal.Decimal(token) for token in line.split()]
    except Exception:
        return None


def stdout_mismatch(output: str, expected: str) -> str | None:
    """Why ``output`` is not ``expected`` under LiveCodeBench's rules, or None.

    ``1.0`` matches ``1`` and ``1e2`` matches ``100`` (equal decimals); a
    word that differs never matches. Comparing a signalling NaN raises, as
    it does upstream (the answer fails)."""
    got, want = stripped_lines(output), stripped_lines(expected)
    if len(got) != len(want):
        return f"wrong answer: {len(got)} output line(s), expected {len(want)}"
    for number, (a, b) in enumerate(zip(got, want, strict=True), 1):
        if a == b:
            continue
        da, db = _decimals(a), _decimals(b)
        if da is None or db is None or da != db:
            return f"wrong answer at line {number}: {_short(a)} != {_short(b)}"
    return None


def value_mismatch(value: Any, expected: Any) -> str | None:
    """Why a method's return value is not the expected one, or None."""
    if isinstance(value, tuple):
        value = list(value)
    if value == expected:
        return None
    return f"wrong answer: returned {_short(value)}, expected {_short(expected)}"


def arguments(test_input: str) -> list[Any]:
    """A functional test's arguments: one JSON value per line."""
    return [json.loads(line) for line in test_input.split("\n")]


class TimeLimit(BaseException):
    """A test ran past its limit in the single program (official scoring)."""


def alarm_within(seconds: float, fn: Callable[..., Any], /, *args: Any) -> Any:
    """``fn(*args)`` under a wall-clock alarm, as upstream times each test
    in the candidate's own process (official scoring only). A program that
    swallows the alarm's exception (a bare ``except:`` around a sleep) is
    judged as upstream judges it: a stdin program's output carries the
    alarm's message (a wrong answer); a functional program's return value
    is compared as it is (the message goes to the real stdout)."""

    def expire(signum: int, frame: object) -> None:
        # Upstream's handler prints this line before it raises: a stdin
        # program that swallows the exception still has the line in its
        # captured output, so the test fails as a wrong answer there too.
        print("timeout occured: alarm went off")
        raise TimeLimit(f"a test ran past its time limit of {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _judge(
    ask: Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]],
    within: _Within,
    limit: float,
    kind: str,
    output: str,
    number: int,
) -> None:
    """Run one test (``ask()``: the function and arguments that give the
    candidate's answer); WrongAnswer (or what the candidate raised) when it
    fails."""
    fn, args = ask()
    if kind == "functional":
        value = within(limit, fn, *args)
        why = value_mismatch(value, json.loads(output))
    else:
        printed = within(limit, fn, *args)
        if type(printed) is not str:
            raise WrongAnswer(f"test {number}: the program's output is not text")
        why = stdout_mismatch(printed, output)
    if why is not None:
        raise WrongAnswer(f"test {number}: {why}")


def _call_of(call: Callable[..., Any], kind: str, test_input: str) -> tuple[Any, tuple[Any, ...]]:
    if kind == "functional":
        return call, ("call", *arguments(test_input))
    return call, ("stdin", test_input)


def _asks(
    call: Callable[..., Any], kind: str, tests: Sequence[tuple[str, str]]
) -> list[Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]]:
    """What gives each test's answer: under strict scoring, the next of the
    answers the candidate's process computes from all the inputs sent at
    once (``__aioeval_map__``); else a call of ``call`` per test (also where
    a functional test's arguments do not parse: that test fails when it is
    reached, as one call at a time has it)."""
    stream = globals().get("__aioeval_map__")
    calls: list[tuple[Any, ...]] = []
    try:
        for test_input, _ in tests if stream is not None else ():
            calls.append(_call_of(call, kind, test_input)[1])
    except ValueError:
        stream = None
    if stream is None:
        return [functools.partial(_call_of, call, kind, test_input) for test_input, _ in tests]
    answers = (next, (stream(call, calls),))
    return [lambda: answers] * len(tests)


def run_tests(
    call: Callable[..., Any],
    within: _Within,
    limit: float,
    kind: str,
    tests: Sequence[tuple[str, str]],
) -> None:
    """Load the program, then run each test with its own time limit; the
    first failure raises (`WrongAnswer`, or what the candidate raised).

    ``call`` is the child's ``_aioeval_lcb`` (a proxy under strict scoring),
    ``within(limit, fn, *args)`` ends a call that takes longer than
    ``limit`` seconds as the answer's timeout."""
    within(limit, call, "load")
    for number, (ask, test) in enumerate(zip(_asks(call, kind, tests), tests, strict=True), 1):
        _judge(ask, within, limit, kind, test[1], number)


class Tally(AssertionError):
    """Some test failed, with the count: ``TAG passed first`` on the first
    line (``first`` 1-based), then the reason the first failure gives."""


def _said(exc: BaseException) -> str:
    name = type(exc).__name__
    try:  # a candidate's exception: its text, when it has plain text
        text = str(exc)
    except Exception:
        return name
    return f"{name}: {text}" if text else name


def tally_tests(
    call: Callable[..., Any],
    within: _Within,
    limit: float,
    kind: str,
    tests: Sequence[tuple[str, str]],
    tag: str,
) -> None:
    """`run_tests` that goes on past failures and counts the tests passed.

    The verdict is the one `run_tests` gives: passed when every test
    passes; a first failure that is a time limit (or anything else not an
    ``Exception``) is raised as it is; otherwise `Tally` is raised at the
    end. A limit reached after the first failure ends the run there (the
    tests not reached count as not passed). ``tag`` is a secret of the
    engine's that begins the tally, so no other failure reads as one."""
    passed, first, why = 0, 0, ""
    try:
        within(limit, call, "load")
    except Exception as exc:
        raise Tally(f"{tag} 0 1\n{_said(exc)}") from None
    for number, (ask, test) in enumerate(zip(_asks(call, kind, tests), tests, strict=True), 1):
        try:
            _judge(ask, within, limit, kind, test[1], number)
            passed += 1
        except Exception as exc:
            if not first:
                first, why = number, _said(exc)
        except BaseException:
            if not first:
                raise
            break
    if first:
        raise Tally(f"{tag} {passed} {first}\n{why}")
