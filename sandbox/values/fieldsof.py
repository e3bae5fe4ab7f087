"""The data attributes of an object and of the objects it reaches, for
the other side's cache of them (`process.fields` in the child for the
test's objects, `strict.session` in the verifier for the candidate's).

A walk through a linked structure reads one attribute per step; asked one
at a time, each read is a round trip between the two processes. So the
first read of an object brings its fields and those of the objects it
reaches through them, breadth first: the public instance attributes that
hold no callable and that its class does not define (no property or
method runs to read them). Binds the builtins it uses at import: it runs
in the candidate's child too.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

_type = type
_id = id
_len = len
_getattr = getattr
_hasattr = hasattr
_callable = callable
_isinstance = isinstance
_str = str
_dict = dict
_list = list
_tuple: type[tuple[object, ...]] = tuple
_deque = collections.deque
_object_getattribute = object.__getattribute__
MOST = 4096
"""Objects one answer gives the fields of at most."""
FIRST = 16
"""Objects the first request after the other side's code ran asks for;
each next one asks for twice as many (up to `MOST`), so what is fetched
stays within twice what is read."""


def plain(obj: Any) -> bool:
    """Does reading ``obj``'s instance attributes run none of its class's
    code (an instance with a ``__dict__``, Python's own attribute lookup)?"""
    cls: Any = _type(obj)
    return (
        not _isinstance(obj, type)
        and cls.__getattribute__ is _object_getattribute
        and not _hasattr(cls, "__getattr__")
        and _type(_getattr(obj, "__dict__", None)) is _dict
    )


def fields_of(
    target: Any, most: int, ok: Callable[[Any], bool], sent: set[int] | None = None
) -> list[list[Any]] | None:
    """``[[object, {name: value}], ...]``: ``target``'s fields and those of
    the objects ``ok`` accepts that it reaches through them, ``most``
    objects in all; None if ``ok`` does not accept ``target``. With
    ``sent`` (the ids the other side already has, which this call adds
    to), those are left out and not walked through, and the items of a
    list or tuple field are reached too (a tree's ``children``)."""

    def read(obj: Any) -> dict[str, Any] | None:
        if not ok(obj):
            return None
        cls = _type(obj)
        return {
            k: v
            for k, v in obj.__dict__.items()
            if _type(k) is _str
            and not k.startswith("_")
            and not _callable(v)
            and not _hasattr(cls, k)
        }

    return _walk(target, most, read, lambda v: _hasattr(v, "__dict__"), sent)


def states_of(
    target: Any, most: int, state: Callable[[Any], dict[str, Any]], sent: set[int] | None = None
) -> list[list[Any]]:
    """``[[object, state], ...]``: ``target``'s whole ``state`` (private
    attributes and slots included) and that of the objects it reaches
    through it that `plain` accepts, breadth first, ``most`` objects in all:
    a prompt's linked list compared with the program's is read in a few
    requests, not one per node. ``sent`` as for `fields_of`."""
    return _walk(target, most, state, plain, sent) or []


def _walk(
    target: Any,
    most: int,
    read: Callable[[Any], dict[str, Any] | None],
    follow: Callable[[Any], bool],
    sent: set[int] | None,
) -> list[list[Any]] | None:
    """Breadth first from ``target``: ``[obj, read(obj)]`` for each object
    reached through what was read that ``follow`` accepts (one ``read``
    refuses is skipped; None if it refuses ``target``), ``most`` in all,
    leaving out those in ``sent`` and adding what it gives to it."""
    out: list[list[Any]] = []
    given = sent if sent is not None else set()
    seen, todo = {_id(target)}, _deque([target])
    while todo and _len(out) < most:
        obj = todo.popleft()
        found = read(obj)
        if found is None:
            if obj is target:
                return None
            continue
        out.append([obj, found])
        for v in _reached(found, sent is not None):
            i = _id(v)
            if i not in seen and i not in given and follow(v):
                seen.add(i)
                todo.append(v)
    given.update(_id(item[0]) for item in out)
    return out


def _reached(found: dict[str, Any], into: bool) -> list[Any]:
    """The values of ``found``, and with ``into`` the items of those that
    are lists or tuples (at most `MOST` of each)."""
    out = list(found.values())
    if into:
        for v in found.values():
            if _type(v) is _list or _type(v) is _tuple:
                out.extend(v[:MOST])
    return out
