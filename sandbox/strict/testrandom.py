"""The test's ``random`` in the verifier: how often the test used it and
seeded it, so its state is handed to the candidate's child only when the
test changed it (see `session.Session`).

The other way, the candidate's draws and seedings never reach the test's
generator: a candidate that set the global generator's state would choose
the test's later draws (the inputs a test generates and checks against a
reference). Where the candidate's code left that state changed (`mirror`'s
``random`` fact), the test's next use of the generator other than setting
it (a draw, ``getstate``) fails the check with a reason that says so: one
program's test would read the candidate's state there.
"""

from __future__ import annotations

import random
from typing import Any

from .outcomes import told

_SEEDS = [0]
"""How many times the verifier's ``random`` was seeded or set (see `watch_random`)."""
_USES = [0]
"""How many times the verifier's ``random`` was used (a draw, a seeding)."""
_LEFT = [False]
"""Whether the candidate's code left the generator's state changed since
the test last set it."""
state = random.getstate
"""The generator's state, read by the verifier itself (not the test's use)."""
CHANGED = (
    "strict scoring: the test used the global random generator after the candidate's code "
    "changed its state, which stays in the candidate's process (in one program they are one "
    "generator, and the candidate's would choose the test's draws)"
)


def candidate_changed() -> None:
    """The candidate's code left the global generator's state changed."""
    _LEFT[0] = True


def _used(seeds: bool) -> None:
    _USES[0] += 1
    _SEEDS[0] += seeds
    if seeds:
        _LEFT[0] = False
    elif _LEFT[0]:
        told(CHANGED)


def seedings() -> tuple[int, int]:
    """How many times the test seeded or set ``random``, and used it, so far."""
    return _SEEDS[0], _USES[0]


def watch_random() -> None:
    """Count the test's uses of the module's functions, and of them the
    seedings (the verifier's module, wrapped once at start)."""
    for name in random.__all__:
        original = getattr(random, name)
        if getattr(original, "__self__", None) is not random._inst:  # type: ignore[attr-defined]
            continue
        seeds = name in ("seed", "setstate")
        # getstate is a read, not a use: only weighed (`candidate_changed`).
        reads = name == "getstate"

        def counted(
            *args: Any,
            _original: Any = original,
            _seeds: bool = seeds,
            _reads: bool = reads,
            **kwargs: Any,
        ) -> Any:
            if _reads:
                if _LEFT[0]:
                    told(CHANGED)
            else:
                _used(_seeds)
            return _original(*args, **kwargs)

        counted.__name__ = counted.__qualname__ = name
        counted.__doc__ = original.__doc__
        setattr(random, name, counted)
