"""Values made once per key and kept in an LRU bounded in count and bytes:
the scorer's verdicts and the problems callers bring."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import anyio

V = TypeVar("V")


class OnceLRU(Generic[V]):
    """``await lru.get(key, make)``: the kept value, or ``make()``'s, made
    once however many callers ask for it at the same time (single flight).
    A value is kept when ``keep(value)``, charged ``size(value)`` bytes;
    the oldest go past ``count`` values or ``limit`` bytes. An error from
    ``make`` is raised to its caller and keeps nothing: a waiting caller
    makes the value itself."""

    def __init__(
        self,
        *,
        count: int,
        limit: int | None = None,
        size: Callable[[V], int] = lambda _value: 0,
        keep: Callable[[V], bool] = lambda _value: True,
    ) -> None:
        self.count, self.limit = count, limit
        self._size, self._keep = size, keep
        self.held = 0
        """Bytes charged for the values kept now."""
        self._kept: OrderedDict[bytes, tuple[V, int]] = OrderedDict()
        self._making: dict[bytes, anyio.Event] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        self._kept.clear()
        self.held = 0

    async def get(self, key: bytes, make: Callable[[], Awaitable[V]]) -> tuple[V, bool]:
        """(value, whether it was kept from before)."""
        while True:
            known = self._kept.get(key)
            if known is not None:
                self._kept.move_to_end(key)
                return known[0], True
            busy = self._making.get(key)
            if busy is None:
                break
            await busy.wait()
        done = self._making[key] = anyio.Event()
        try:
            value = await make()
        finally:
            del self._making[key]
            done.set()
        if self._keep(value):
            self._put(key, value)
        return value, False

    def _put(self, key: bytes, value: V) -> None:
        size = self._size(value)
        old = self._kept.pop(key, None)
        self.held += size - (old[1] if old is not None else 0)
        self._kept[key] = (value, size)
        while self._kept and (
            len(self._kept) > self.count or (self.limit is not None and self.held > self.limit)
        ):
            _, (_, dropped) = self._kept.popitem(last=False)
            self.held -= dropped
