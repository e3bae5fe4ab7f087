"""Warnings the candidate's code issues, handed to the test's ``warnings``.

The test's warning filters reach the child with its process state
(`world`): `filters` reads them in the verifier (their categories by
builtin name, message patterns as text; a filter on a category of the
test's own is left out), `set_filters` puts them in place in the child, so
a warning the test makes an error raises there, in the candidate's code,
and one it ignores is dropped. In the child, `tap` keeps each warning that
would be shown as a record beside the log records (`logtap`); in the
verifier, `issue` warns it again under the test's filters, attributed to
the program (module ``__main__``, as in one program), so
``warnings.catch_warnings(record=True)`` and ``assertWarns`` see it.
"""

from __future__ import annotations

import builtins
import re
import warnings
from typing import Any

from . import realclasses

MARK = "\x00warning"
"""The name a warning's record carries among the log records."""
MAX_FILTERS = 256
_type = type
_str = str
_len = len
_mro = type.__dict__["__mro__"].__get__
_builtin_name = realclasses.builtin_name
_key: tuple[int, int, int] | None = None
_read: list[list[Any]] | None = None


def filters() -> list[list[Any]] | None:
    """In the verifier: the test's warning filters as plain fields
    (``[action, message pattern, category name, lineno]``; read again only
    when the list changed)."""
    global _key, _read
    now = warnings.filters
    key = (id(now), len(now), id(now[0]) if now else 0)
    if key != _key:
        _key, _read = key, _plain(now)
    return _read


def _plain(items: Any) -> list[list[Any]]:
    out = []
    for item in items[:MAX_FILTERS]:
        action, message, category, lineno = item[0], item[1], item[2], item[4]
        name = str(category.__name__)
        if getattr(builtins, name, None) is not category:
            continue
        pattern = message.pattern if isinstance(message, re.Pattern) else None
        out.append([action, pattern, name, lineno])
    return out


def set_filters(items: Any) -> None:
    """In the child: the test's filters in place of its own (a malformed
    one is skipped)."""
    if _type(items) is not list:
        return
    warnings.filters[:] = _made(items)  # type: ignore[index]
    warnings._filters_mutated()  # type: ignore[attr-defined]


def take_filters(items: Any) -> None:
    """In the verifier: the filters the candidate's code left (``items``,
    as `filters` reads them in the child). Filters it added in front of
    the test's are added in front of the test's own; any other change
    replaces the ones the child could see, keeping the test's filters on
    categories of its own (which the child never had) after them."""
    if _type(items) is not list:
        return
    mine = _plain(warnings.filters)
    if items == mine:
        return
    own = [f for f in warnings.filters if not _builtin(f[2])]
    added = _len(items) - _len(mine)
    if added > 0 and items[added:] == mine:
        warnings.filters[:0] = _made(items[:added])  # type: ignore[index]
    else:
        warnings.filters[:] = _made(items) + own  # type: ignore[index]
    warnings._filters_mutated()  # type: ignore[attr-defined]


def _builtin(category: Any) -> bool:
    return realclasses.builtin_name(category) is not None


def _made(items: list[Any]) -> list[tuple[Any, ...]]:
    """Filters from their plain fields (a malformed one is skipped)."""
    made = []
    for item in items[:MAX_FILTERS]:
        if _type(item) is not list or _len(item) != 4:
            continue
        action, pattern, name, lineno = item
        category = realclasses.builtin(name)  # the real class, whatever the program bound
        if not (isinstance(category, type) and issubclass(category, Warning)):
            continue
        if action not in ("error", "ignore", "always", "default", "module", "once"):
            continue
        try:
            message = re.compile(pattern, re.I) if _type(pattern) is str else None
        except re.error:
            continue
        made.append((action, message, category, None, lineno if _type(lineno) is int else 0))
    return made


def tap(keeper: Any, limit: int) -> None:
    """In the child: keep each warning that would be shown among
    ``keeper.records`` (the log records, at most ``limit``), for the next
    message to the verifier."""

    def show(message: Any, category: Any, filename: Any, lineno: Any, *rest: Any) -> None:
        try:
            if _len(keeper.records) >= limit:
                return
            # A class of the program's (one named and bound like a builtin
            # too) is its nearest builtin base, known by identity.
            found = next(n for c in _mro(category) if (n := _builtin_name(c)) is not None)
            line = lineno if _type(lineno) is int else 0
            keeper.records.append([MARK, 0, _str(message)[:10_000], found, line, None, [], None])
        except Exception:
            pass

    warnings.showwarning = show  # type: ignore[assignment]


def issue(text: str, name: Any, lineno: Any) -> None:
    """In the verifier: the child's warning, warned again under the test's
    filters (an error there is dropped: the child raised it already)."""
    category = getattr(builtins, name, None) if _type(name) is str else None
    if not (isinstance(category, type) and issubclass(category, Warning)):
        category = UserWarning
    try:
        warnings.warn_explicit(
            text, category, "<candidate>", lineno if _type(lineno) is int else 0, "__main__"
        )
    except Exception:
        pass
