"""Operators and conversions of a program's object, asked of the child.

A handle's arithmetic on an object that has no builtin value, and whose
prompt class does not define the operator, is the candidate's own
computation (`strict.handlemath`): the verifier asks for it by name and
the child runs Python's operator on its object, with the candidate's
methods. Both sides take the names from here.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

BINARY = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift")
BITWISE = (("and", "and_"), ("or", "or_"), ("xor", "xor"))
"""The bitwise operators' dunder names and their ``operator`` functions."""
UNARY = ("neg", "pos", "abs", "invert")
CONVERSIONS: dict[str, Callable[..., Any]] = {
    "int": int,
    "float": float,
    "complex": complex,
    "index": operator.index,
    "round": round,
    "trunc": math.trunc,
    "floor": math.floor,
    "ceil": math.ceil,
}
INPLACE = {f"i{name}": name for name in (*BINARY, *(d for d, _ in BITWISE))}
"""``a += b`` and the like: ``operator.iadd`` by the dunder's name."""
COMPUTED: dict[str, Callable[..., Any]] = {
    **{name: getattr(operator, name) for name in (*BINARY, *UNARY)},
    **{fn: getattr(operator, fn) for _, fn in BITWISE},
    **{name: getattr(operator, name) for name in INPLACE},
    **CONVERSIONS,
}
"""Every name the verifier may ask, and what the child runs for it."""
_type, _len = type, len  # bound before any candidate code runs (see `serve`)


def compute(target: object, args: Any) -> Any:
    """``args[0]`` of ``target``: a binary operator's ``args`` are
    ``[name, other, reflected]``, a unary one's ``[name, *more]`` (the
    digits of ``round``)."""
    if _type(args) is not list or not args or args[0] not in COMPUTED:
        raise TypeError("malformed operator")
    fn = COMPUTED[args[0]]
    if _len(args) == 3 and _type(args[2]) is bool:
        return fn(args[1], target) if args[2] else fn(target, args[1])
    if _len(args) > 2:
        raise TypeError("malformed operator")
    return fn(target, *args[1:])
