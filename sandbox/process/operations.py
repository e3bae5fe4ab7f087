"""What each request of the verifier's does in the candidate's child.

A `handles.Handle` in the verifier forwards an operation (a call, an
attribute read, iteration, ``len``, ...) on one of the child's objects;
`perform` does it here, with the candidate's own code, and returns what the
serving loop (`serve`) encodes back. Names are bound at import, before any
candidate code runs, so rebinding builtins cannot change what is done.
"""

from __future__ import annotations

import copy
from typing import Any

from .. import protocol
from ..values import arith, asyncrun, described, fieldsof, signature
from . import methods

_type = type
_len = len
_str = str
_repr = repr
_format = format
_iter = iter
_next = next
_aiter = aiter
_getattr = getattr
_setattr = setattr
_delattr = delattr
_isinstance = isinstance
_run_coroutine = asyncrun.run_nested
_copy = copy.copy
_deepcopy = copy.deepcopy
_signature = signature.describe


_sent: dict[str, tuple[int, set[int]]] = {}
"""Per batched read, the verifier's epoch and the objects already given."""


def _batch(name: str, args: Any) -> tuple[int, set[int]]:
    """The most objects a batched read gives, and the ids of the objects
    it gave since the verifier's epoch last moved (``args``: ``[most,
    epoch]``), which the verifier still has: a walk down a tree whose
    nodes link to their parents would otherwise bring the whole way back
    up with each new node, a cost that grows with the square of the depth."""
    if _type(args) is not list or _len(args) != 2 or _type(args[1]) is not int:
        raise TypeError("malformed batched read")
    most = args[0] if _type(args[0]) is int and 0 < args[0] <= fieldsof.MOST else 1
    epoch, sent = _sent.get(name, (-1, set()))
    if epoch != args[1]:
        sent = set()
        _sent[name] = (args[1], sent)
    return most, sent


def _program_plain(obj: object) -> bool:
    """An instance of a class of the program's own, read by Python's own
    attribute lookup: a library's object (a ``WeakSet`` and the set of weak
    references it keeps) is read one attribute at a time, as asked."""
    return fieldsof.plain(obj) and described.made_here(_type(obj))


def perform(scope: dict[str, object], objects: list[object], op: protocol.Op, args: Any) -> Any:
    """Do ``op`` with ``args`` on the program's global (``ref`` -1) or on
    the object the verifier's handle ``ref`` names."""
    name = op.op
    if op.ref == -1:  # a global of the program, looked up now
        fn = scope.get(args[0])
        if fn is None:
            raise NameError(f"name {args[0]!r} is not defined")
        return fn(*args[1], **(args[2] or {}))  # type: ignore[operator]
    target = objects[op.ref]
    if name == "call":
        return target(*args[0], **(args[1] or {}))  # type: ignore[operator]
    if name == "build":  # a call, and the attributes of what it made
        made = target(*args[0], **(args[1] or {}))  # type: ignore[operator]
        return [made, None if _isinstance(made, type) else described.state(made)]
    if name == "getattr":
        return _getattr(target, args)
    if name == "setattr":  # a test's function set on a class binds there
        value = methods.as_method(args[2:], args[1]) if _isinstance(target, type) else args[1]
        return _setattr(target, args[0], value)
    if name == "delattr":
        return _delattr(target, args)
    if name == "iter":
        return _iter(target)  # type: ignore[call-overload]
    if name == "next":
        return _next(target)  # type: ignore[call-overload]
    if name == "len":
        return _len(target)  # type: ignore[arg-type]
    if name == "getitem":
        return target[args]  # type: ignore[index]
    if name == "setitem":
        target[args[0]] = args[1]  # type: ignore[index]
        return None
    if name == "delitem":
        del target[args]  # type: ignore[attr-defined]
        return None
    if name == "str":
        return _str(target)
    if name == "repr":
        return _repr(target)
    if name == "format":
        return _format(target, args)
    if name == "signature":  # ``inspect.signature``, as data (`strict.autospecs`)
        return _signature(target)
    if name == "isinstance":
        return _isinstance(args, target)  # type: ignore[arg-type]
    if name == "type":  # the object's own class (runs none of its code)
        return _type(target)
    if name == "plain":
        return described.as_base(target)
    if name == "state":
        return described.state(target)
    if name == "states":  # see `fieldsof.states_of`: none of the program's code runs
        most, sent = _batch(name, args)
        return fieldsof.states_of(target, most, described.state, sent)
    if name == "fields":  # see `fieldsof`: none of the program's code runs
        most, sent = _batch(name, args)
        return fieldsof.fields_of(target, most, _program_plain, sent)
    if name == "operator":  # the candidate's own arithmetic (`handlemath`)
        return arith.compute(target, args)
    if name == "copy":  # ``copy.copy`` of the object: its class's own code
        return _copy(target)
    if name == "deepcopy":
        return _deepcopy(target)
    if name == "aiter":
        return _aiter(target)  # type: ignore[arg-type]
    if name == "anext":  # a step of ``async for``: a coroutine the test's loop awaits
        return asyncrun.next_step(target)
    if name == "await":  # a coroutine, run to its end on a loop of its own
        return _run_coroutine(target)  # type: ignore[arg-type]
    if name == "gather":  # several, side by side on one loop of their own
        return _run_coroutine(asyncrun.together([target, *args]))
    raise TypeError(f"unknown operation {name!r}")
