"""The test's measures of its own process, named where they would judge the
candidate: CPU time, memory, the objects alive and tracing all measure the
verifier, where the candidate's code never runs, so a budget or leak test
would pass any answer. Calling one fails the check with its reason (a told
refusal) and then does what it always does, so the test runs on unchanged.

Set once in the verifier's template, before it is copied into each check;
the sandbox's own code binds what it uses of these at import."""

from __future__ import annotations

import asyncio
import functools
import gc
import resource
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .outcomes import told

_MEASURES: tuple[tuple[ModuleType, str, tuple[str, ...]], ...] = (
    (time, "the CPU time", ("process_time", "process_time_ns", "thread_time", "thread_time_ns")),
    (resource, "the resources used", ("getrusage",)),
    (tracemalloc, "the memory allocated", ("start", "get_traced_memory", "take_snapshot")),
    (gc, "the objects alive", ("get_objects", "get_referrers", "get_referents")),
    (sys, "the calls made", ("setprofile", "settrace")),
    (threading, "the calls made", ("setprofile", "settrace")),
    (threading, "the threads running", ("active_count", "enumerate")),
    (asyncio, "the tasks running", ("all_tasks",)),
)


def prepare() -> None:
    """Put the named stand-ins in place of each measure."""
    for module, what, names in _MEASURES:
        for name in names:
            original = getattr(module, name, None)
            if callable(original):
                setattr(module, name, _named(original, f"{module.__name__}.{name}", what))


def _named(original: Callable[..., Any], qualified: str, what: str) -> Callable[..., Any]:
    reason = (
        f"strict scoring: the test measured {what} of its own process ({qualified}), "
        "where the candidate's code does not run"
    )

    @functools.wraps(original)
    def measure(*args: Any, **kwargs: Any) -> Any:
        told(reason)
        return original(*args, **kwargs)

    return measure
