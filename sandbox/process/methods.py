"""The test's function set on a class of the program's, as a method there.

In one program a function set on a class (``mock.patch.object(Gateway,
"charge", autospec=True)``) binds as a method: ``gateway.charge(token)``
calls it with the instance first. The verifier marks such a value (the
test's plain function); here it becomes a function of the child's that
calls the test's, so Python's own binding passes the instance (a handle
on the candidate's object there). The function crosses back as the test's
own object, so reading ``Gateway.charge`` gives the test its mock again.
"""

from __future__ import annotations

from typing import Any

from .proxy import Proxy

_type = type
_id = id
_len = len
MOST = 4096
"""Functions followed at most; past it one stays a plain function of the child's."""
_STANDS: dict[int, tuple[object, Proxy]] = {}


def as_method(marks: Any, value: object) -> object:
    """``value`` as set on a class: a function calling the test's, where the
    verifier marked it (``marks``: ``[True]``) as a function that binds."""
    if marks != [True] or _type(value) is not Proxy:
        return value
    test_fn: Proxy = value

    def method(*args: Any, **kwargs: Any) -> Any:
        return test_fn(*args, **kwargs)

    if _len(_STANDS) < MOST:
        _STANDS[_id(method)] = (method, test_fn)
    return method


def standing_for(v: object) -> Proxy | None:
    """The test's function that ``v`` (made by `as_method`) calls, if any."""
    item = _STANDS.get(_id(v))
    return item[1] if item is not None and item[0] is v else None
