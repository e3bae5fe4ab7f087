"""The test's objects as the candidate's code sees them, in a strict job's child.

An object the test passes to the candidate (a callback, a list it keeps, a
class of its own) stays in the verifier; the child gets a `Proxy`, and every
use of it (a call, an attribute, iteration, an operator) is a request back
to the verifier, which runs the test's own code. Its own module because it is
the one piece of the child that stands for the test's side: `serve` holds the
channel (`serve._Peer`) that the requests go through.
"""

from __future__ import annotations

from typing import Any, Protocol

from .. import protocol

_setattr = setattr


class Peer(Protocol):
    """The channel a proxy's requests go through (`serve._Peer`)."""

    def ask(self, ref: int, op: str, args: object = None) -> Any: ...


class Proxy:
    """An object of the test's, used from the candidate's code: every use is
    a request back to the verifier, which runs the test's own code."""

    __slots__ = ("_peer", "_vid")

    def __init__(self, peer: Peer, vid: int) -> None:
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_vid", vid)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._peer.ask(self._vid, "call", (args, kwargs or None))

    def __getattr__(self, name: str) -> Any:
        return self._peer.ask(self._vid, "getattr", name)

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
        self._peer.ask(self._vid, "setattr", [name, value])

    def __bool__(self) -> bool:
        return self._peer.ask(self._vid, "bool") is True

    def __hash__(self) -> int:
        return self._peer.ask(self._vid, "hash")  # type: ignore[no-any-return]

    def __contains__(self, item: object) -> bool:
        return self._peer.ask(self._vid, "contains", item) is True


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
