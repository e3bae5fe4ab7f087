"""What the candidate's code does to its process state, handed back to the
test's: the mirror of `world`.

In one program a candidate that sets an environment variable, moves to
another directory, changes the ``decimal`` context, the recursion limit,
the int digit limit, the umask, the warning filters or an interpreter
setting (`settings`) leaves that change to the test's code that runs next
(a test that checks the caller's state is unchanged sees it). In the child, a `Mirror` reads that state before each message that
lets the test's code run again (an answer, a call of the test's
function) and, where it changed since the two sides last agreed, sends it
first (the ``world`` op, to the verifier); `take` applies it there,
bounded and validated, and never weaker than the check's own guards: a
umask that would leave the test's files writable to the candidate is not
taken, and the check fails with a reason that says so.

State the verifier must not take from the candidate is named instead, as
a fact for the verifier to weigh (`take`'s ``left``): the global
``random`` generator's state left changed (``random``), ``sys.path``
(``path``: the verifier's imports never follow it), a signal's handler
(``signal``: the handler is the candidate's code) left other than at the
start of the check, and a filter given to a logger (``logfilter``: the
candidate's code too).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from . import filetap, heldstate, idtap, logfilters, logtap, settings, warntap, world

MAX_RECURSION = 100_000
"""The most recursion limit the verifier takes from the candidate."""
GUARD_MASK = 0o022
"""Bits the verifier's umask always keeps (its files stay unwritable to
the candidate's user)."""
_ENV: dict[bytes, bytes] = getattr(os.environ, "_data", {})
_type = type
_len = len


def snap() -> tuple[Any, ...]:
    """The state one side's code can change that the other reads."""
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    mask = os.umask(0o022)
    os.umask(mask)
    return (
        dict(_ENV),
        cwd,
        world.decimal_fields(),
        sys.getrecursionlimit(),
        sys.get_int_max_str_digits(),
        mask,
        settings.read(),
        warntap.filters(),
    )


class Mirror:
    """In the child: the state both sides last agreed on."""

    def __init__(self) -> None:
        """Made before the program loads (`heldstate.watch`)."""
        heldstate.watch()
        self.start = self.agreed = snap()
        self.held = heldstate.Held()
        self.facts: list[list[str]] = []
        """What the candidate's code did that one program shares and this
        model cannot (`take`), for the verifier to weigh."""

    def note(self, fact: list[str]) -> None:
        """Hand ``fact`` (``[kind, name]``, see `take`) over with the state."""
        if fact not in self.facts:
            self.facts.append(fact)

    def agree(self) -> None:
        """After the verifier's own state was taken (`world.apply`)."""
        self.agreed = snap()

    def agree_random(self) -> None:
        """After the test's ``random`` state was set here (`protocol.Op.rand`)."""
        self.held.agree_random()

    def report(self, answering: bool = False) -> list[Any] | None:
        """The state to hand back, if the candidate's code changed it, and
        the facts noted since the last report (``answering``: see
        `heldstate.Held.facts`)."""
        now = snap()
        for fact in self.held.facts(answering):
            self.note(fact)
        logtap.look()
        while logtap.HANDLED:
            self.note(["logger", logtap.HANDLED.pop()])
        while logfilters.FILTERED:
            self.note(["logfilter", logfilters.FILTERED.pop()])
        while filetap.NOTED:
            self.note(["denied", filetap.NOTED.pop(0)])
        while idtap.NOTED:
            self.note(["id", idtap.NOTED.pop()])
        facts, self.facts = self.facts, []
        if now == self.agreed and not facts:
            return None
        before, self.agreed = self.agreed[0], now
        env, start = now[0], self.start[0]
        put = {_text(k): _text(v) for k, v in env.items() if start.get(k) != v}
        # Gone since the start, or since the sides last agreed (a variable
        # the test set and the candidate's code removed).
        gone = [_text(k) for k in {**start, **before} if k not in env]
        return [put, gone, *now[1:], facts]


def _same(tree: Any) -> Any:
    return tree


def _text(raw: bytes) -> str:
    return raw[: world.MAX_ENV].decode("utf-8", "surrogateescape")


def take(
    tree: Any,
    shared: str,
    refuse: Callable[[str], object],
    contended: Callable[[], None] = lambda: None,
    noted: Callable[[str], None] = lambda reason: None,
    left: Callable[[str, str], None] = lambda kind, name: None,
) -> None:
    """In the verifier: the candidate's state (``shared``: the check's
    shared directory, the only one it may move the test to; ``contended``:
    told of the ``threads`` fact; ``noted``: the reason to give should the
    check fail, for what one program shares and this model does not;
    ``left``: told of the ``random``, ``path``, ``signal`` and
    ``logfilter`` facts and of a lowered recursion limit, the state this
    side does not take)."""
    if _type(tree) is not list or _len(tree) != 10:
        return
    put, gone, cwd, dec, recursion, digits, mask, interp, caught, facts = tree
    _name(facts, contended, noted, refuse, left)
    world.quietly(settings.put, interp)
    warntap.take_filters(caught)
    if _type(put) is dict and _len(put) > world.MAX_ENV:
        put = dict(list(put.items())[: world.MAX_ENV])
    if _type(gone) is list:
        gone = gone[: world.MAX_ENV]
    world.apply(
        [put, gone, dec, digits, None, None, None, None, None, None, []], _same, {}, tzset=False
    )
    if _type(cwd) is str and (cwd == shared or cwd.startswith(shared.rstrip("/") + "/")):
        world.quietly(os.chdir, cwd)
    if _type(recursion) is int and recursion > 0:
        if recursion < sys.getrecursionlimit():  # not taken: our calls run deeper
            left("recursion", str(recursion))
        else:
            world.quietly(sys.setrecursionlimit, min(recursion, MAX_RECURSION))
    if _type(mask) is int and 0 <= mask <= 0o777:
        os.umask(mask | GUARD_MASK)
        if mask & GUARD_MASK != GUARD_MASK:
            refuse(
                f"strict scoring: the candidate's code set the umask to {mask:#o}, which the "
                f"test's process keeps at least {GUARD_MASK:#o} (its files are not the "
                "candidate's to change)"
            )


def _name(
    facts: Any,
    contended: Callable[[], None],
    noted: Callable[[str], None],
    refuse: Callable[[str], object],
    left: Callable[[str, str], None],
) -> None:
    """The child's facts: ``["threads", ""]`` (one of its threads waited
    for another's request to the test's code) goes to ``contended``
    (`strict.sidebyside` weighs it); ``["logger", name]`` (its code gave
    that logger a handler of its own) and ``["id", ""]`` (`idtap`) to
    ``noted``; ``["denied", path]``
    (the files rule refused its change of the test's file, `filetap`) to
    ``refuse``, which fails the check whatever either side does after; the
    state it does not hand over (`Mirror._held_facts`) to ``left``."""
    if _type(facts) is not list:
        return
    for fact in facts[:16]:
        if _type(fact) is not list or _len(fact) != 2:
            continue
        if fact[0] == "threads":
            contended()
        elif fact[0] == "denied" and _type(fact[1]) is str:
            refuse(filetap.reason(fact[1]))
        elif (
            fact[0] in ("random", "path", "signal", "logfilter", "stream") and _type(fact[1]) is str
        ):
            left(fact[0], fact[1][:200])
        elif fact[0] == "id":
            noted(
                "strict scoring: the candidate's code took id() of the test's object, which in "
                "the candidate's process is the id of a stand-in, not the test's id of it (in "
                "one program they are one object)"
            )
        elif fact[0] == "logger" and _type(fact[1]) is str:
            noted(
                f"strict scoring: the candidate's code gave the logger {fact[1][:200]!r} a "
                "handler in its own process, which the test's logger of that name does not "
                "have (in one program they are one logger)"
            )
