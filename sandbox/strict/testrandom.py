"""The test's ``random`` in the verifier: how often the test used it and
seeded it, so its state is handed to the candidate's child only when the
test changed it (see `session.Session`)."""

from __future__ import annotations

import random
from typing import Any

_SEEDS = [0]
"""How many times the verifier's ``random`` was seeded or set (see `watch_random`)."""
_USES = [0]
"""How many times the verifier's ``random`` was used (a draw, a seeding)."""


def seedings() -> tuple[int, int]:
    """How many times the test seeded or set ``random``, and used it, so far."""
    return _SEEDS[0], _USES[0]


def watch_random() -> None:
    """Count the test's uses of the module's functions, and of them the
    seedings (the verifier's module, wrapped once at start)."""
    for name in random.__all__:
        original = getattr(random, name)
        if name == "getstate" or getattr(original, "__self__", None) is not random._inst:  # type: ignore[attr-defined]
            continue
        seeds = name in ("seed", "setstate")

        def counted(
            *args: Any, _original: Any = original, _seeds: bool = seeds, **kwargs: Any
        ) -> Any:
            _USES[0] += 1
            _SEEDS[0] += _seeds
            return _original(*args, **kwargs)

        counted.__name__ = counted.__qualname__ = name
        counted.__doc__ = original.__doc__
        setattr(random, name, counted)
