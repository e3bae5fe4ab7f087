"""What a task group's exception group means to a caller of the engine.

`evaluate` and `streaming.open_run` run their stages in task groups, whose
failures arrive as ``BaseExceptionGroup``; a caller expects one exception it
can catch by type. Its own module because both entry points share it and it
is pure (no I/O, no run state).
"""

from __future__ import annotations

import asyncio

from aioeval.errors import EngineErrors


def engine_error(group: BaseExceptionGroup) -> BaseException:
    """What a task group's ExceptionGroup means to the caller, nothing
    dropped: an interrupt (KeyboardInterrupt, SystemExit) as itself; a lone
    error as itself (``except AioevalError`` works); several as one
    `EngineErrors` holding them all; cancellation alone as cancellation."""
    leaves = _leaves(group)
    for exc in leaves:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            return exc
    errors = [e for e in leaves if not isinstance(e, asyncio.CancelledError)]
    if not errors:
        return leaves[0]
    if len(errors) == 1:
        return errors[0]
    listed = "; ".join(f"{type(e).__name__}: {e}" for e in errors)
    message = f"{len(errors)} errors ended the run: {listed}"
    plain = [e for e in errors if isinstance(e, Exception)]
    if len(plain) == len(errors):
        return EngineErrors(message, plain)
    return BaseExceptionGroup(message, errors)


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out
