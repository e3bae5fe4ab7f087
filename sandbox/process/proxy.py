"""The test's objects as the candidate's code in the child uses them.

A `Proxy` stands for an object of the test's that stays in the verifier (a
function or instance it passed, a stream, a mock, a coroutine): every use
is a request back to the verifier (``peer.ask``), where the test's own code
answers it (`strict.testobjects` says what the child may ask).
"""

from __future__ import annotations

from typing import Any

from .. import protocol
from ..values import asyncrun, signature

_setattr = setattr


class Proxy:
    # An object of the test's, used from the candidate's code: every use is
    # a request back to the verifier, which runs the test's own code. No
    # docstring: ``__doc__`` is the test's object's (``functools.wraps``
    # copies a function's), read from the verifier.

    __slots__ = ("__weakref__", "_peer", "_vid")

    @property
    def __doc__(self) -> Any:  # type: ignore[override]
        return self._peer.ask(self._vid, "getattr", "__doc__")

    @property
    def __signature__(self) -> Any:  # what ``inspect.signature`` reads first
        return signature.build(self._peer.ask(self._vid, "signature"))

    def __init__(self, peer: Any, vid: int) -> None:
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_vid", vid)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._peer.ask(self._vid, "call", (args, kwargs or None))

    def __getattr__(self, name: str) -> Any:
        return self._peer.fields.get(self, name)

    def __iter__(self) -> Any:
        return self._peer.ask(self._vid, "iter")

    def __next__(self) -> Any:
        return self._peer.ask(self._vid, "next")

    def __len__(self) -> int:
        return self._peer.ask(self._vid, "len")  # type: ignore[no-any-return]

    def __getitem__(self, key: Any) -> Any:
        return self._peer.ask(self._vid, "getitem", key)

    def __repr__(self) -> str:
        return self._peer.ask(self._vid, "repr")  # type: ignore[no-any-return]

    __str__ = __repr__

    def __setattr__(self, name: str, value: Any) -> None:
        if not self._peer.fields.put(self, name, value):
            self._peer.ask(self._vid, "setattr", [name, value])

    def __bool__(self) -> bool:
        return self._peer.ask(self._vid, "bool") is True

    def __hash__(self) -> int:
        return self._peer.ask(self._vid, "hash")  # type: ignore[no-any-return]

    def __contains__(self, item: object) -> bool:
        return self._peer.ask(self._vid, "contains", item) is True

    def __enter__(self) -> Any:
        return self._peer.ask(self._vid, "enter")

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        return self._peer.ask(self._vid, "exit", (kind, exc)) is True

    def __await__(self) -> Any:
        return _awaited(self)


def _awaited(proxy: Proxy) -> Any:
    """The test's awaitable, run to its end in the verifier (`asyncrun`)."""
    return proxy._peer.ask(proxy._vid, "await", asyncrun.alone())
    yield  # a generator that returns at its first step


def _proxy_operator(name: str, reflected: bool) -> Any:
    def op(self: Proxy, other: object) -> Any:
        return self._peer.ask(self._vid, "operator", [name, other, reflected])

    return op


for _op in ("eq", "ne", "lt", "le", "gt", "ge", *protocol.ARITHMETIC):
    _setattr(Proxy, f"__{_op}__", _proxy_operator(_op, False))
for _op in protocol.ARITHMETIC:
    _setattr(Proxy, f"__r{_op}__", _proxy_operator(_op, True))
for _op in ("neg", "pos", "abs"):
    _setattr(Proxy, f"__{_op}__", lambda self, _op=_op: self._peer.ask(self._vid, _op))
