"""The test's function's signature, as the candidate's code reads it.

A decorator of the candidate's that the test applies to its own function
(``@check_types(qty=int)``, a memoizer keyed by bound arguments) reads the
function's signature with ``inspect.signature``. The function stays in the
verifier and the child holds a proxy for it, so the proxy answers
``__signature__`` (which ``inspect.signature`` reads first) with an
``inspect.Signature`` built in the child from data: each parameter's
name, kind, default and annotation, values under the wire's rules (the
test's own objects among them as proxies). Nothing of the candidate's
runs in the verifier to make it: `describe` reads the test's function
with ``inspect``.
"""

from __future__ import annotations

import inspect
from typing import Any

MAX_PARAMETERS = 256
"""Parameters a signature crosses with (more is the test's odd function)."""
_EMPTY = inspect.Parameter.empty
_P = inspect.Parameter
_KINDS: tuple[Any, ...] = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD, _P.VAR_POSITIONAL)
_KINDS += (_P.KEYWORD_ONLY, _P.VAR_KEYWORD)
"""Parameter kinds by their number (``int(kind)``)."""
_type = type
_len = len


def describe(fn: Any) -> list[Any]:
    """In the verifier: ``fn``'s signature as data,
    ``[[[name, kind, has default, default, has annotation, annotation], ...],
    has return annotation, return annotation]``; raises as
    ``inspect.signature`` does (``ValueError``, ``TypeError``)."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if _len(params) > MAX_PARAMETERS:
        raise ValueError(f"a signature of more than {MAX_PARAMETERS} parameters")
    return [
        [[p.name, int(p.kind), *_optional(p.default), *_optional(p.annotation)] for p in params],
        *_optional(sig.return_annotation),
    ]


def _optional(value: Any) -> list[Any]:
    return [False, None] if value is _EMPTY else [True, value]


def build(tree: Any) -> inspect.Signature:
    """In the child: the signature `describe` gave (``ValueError`` where
    the tree is not one)."""
    if _type(tree) is not list or _len(tree) != 3 or _type(tree[0]) is not list:
        raise ValueError("no signature found")
    params = []
    for item in tree[0][:MAX_PARAMETERS]:
        if _type(item) is not list or _len(item) != 6 or _type(item[0]) is not str:
            raise ValueError("no signature found")
        name, kind, has_default, default, has_annotation, annotation = item
        if _type(kind) is not int or not 0 <= kind < _len(_KINDS):
            raise ValueError("no signature found")
        params.append(
            inspect.Parameter(
                name,
                _KINDS[kind],
                default=default if has_default is True else _EMPTY,
                annotation=annotation if has_annotation is True else _EMPTY,
            )
        )
    back = tree[2] if tree[1] is True else _EMPTY
    return inspect.Signature(params, return_annotation=back)
