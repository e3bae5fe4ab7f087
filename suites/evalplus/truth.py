"""The reference's outputs and run time on every input of an EvalPlus
problem: computed once, in the sandbox, and kept on disk.

EvalPlus runs the canonical solution on each input to get the expected
output and the time each input took (its limit is a multiple of that).
Here the reference runs as a sandboxed `Call` (a dataset's code is not
trusted with the engine's process either) and its answer comes back as
plain data, stored as received under a key of everything that decides it
(the reference, the inputs, the entry point), in
``$AIOEVAL_CACHE_DIR/evalplus`` (default: the user cache directory). A
cached answer is read back by the same plain-data reader, and one that
does not fit the problem is computed again.
"""

from __future__ import annotations

import hashlib
from typing import Any

from aioeval.errors import InputError
from aioeval.executors.base import Executor
from aioeval.sandbox.protocol import Call
from aioeval.sandbox.values import plain
from aioeval.types import Problem

from ..base import cache_dir, write_atomic

ENTRY = "_aioeval_truth"
CPU_S = 120.0
"""Budget of the reference over all of one part's inputs."""
VERSION = b"evalplus-truth-1"


def helper(entry: str) -> str:
    """Appended to the reference: every input (a deep copy, as EvalPlus
    passes it), its output and its wall time."""
    return (
        f"\n\ndef {ENTRY}(inputs, not_none):\n"
        "    import copy, time\n"
        f"    fn = globals()[{entry!r}]\n"
        "    outputs, times = [], []\n"
        "    for args in inputs:\n"
        "        args = copy.deepcopy(args)\n"
        "        start = time.time()\n"
        "        outputs.append(fn(*args))\n"
        "        times.append(time.time() - start)\n"
        "    if not_none:\n"
        "        outputs = [out is not None for out in outputs]\n"
        "    return [outputs, times]\n"
    )


def _key(problem: Problem, part: str, not_none: bool) -> str:
    f = problem.fields
    h = hashlib.sha256(VERSION)
    for text in (f["prompt"], f["canonical_solution"], f["entry_point"], f[f"{part}_input"]):
        h.update(len(text).to_bytes(8, "little") + text.encode("utf-8", "surrogatepass"))
    h.update(b"1" if not_none else b"0")
    return h.hexdigest()


def _decode(data: bytes, n: int) -> tuple[list[Any], list[float]] | None:
    try:
        value = plain.loads(data)
    except plain.NotPlain:
        return None
    if not (isinstance(value, list) and len(value) == 2):
        return None
    outputs, times = value
    if not (isinstance(outputs, list) and isinstance(times, list)):
        return None
    if len(outputs) != n or len(times) != n or not all(type(t) is float for t in times):
        return None
    return outputs, times


CALLERS_MARK = "@"
"""In the name of a problem a caller brought (``name@digest``, as the
service names them): its reference outputs are not written to the disk
cache, which callers could otherwise grow without bound."""


async def compute(
    problem: Problem, part: str, args: list[Any], not_none: bool, pool: Executor
) -> tuple[list[Any], list[float]]:
    """(outputs, seconds per input) of the reference on ``args``."""
    if not args:
        return [], []
    path = cache_dir() / "evalplus" / f"{_key(problem, part, not_none)}.msgpack"
    try:
        cached = _decode(path.read_bytes(), len(args))
    except OSError:
        cached = None
    if cached is not None:
        return cached
    outputs, times, data = await _run(problem, part, args, not_none, pool)
    if CALLERS_MARK in problem.id:
        return outputs, times  # a caller's problem: kept in memory only (callers are many)
    if data is None:  # run in parts: their answers as one
        try:
            data = plain.dumps([outputs, times])
        except plain.NotPlain:
            return outputs, times  # past what the cache's reader takes: computed each run
    try:
        write_atomic(path, data)
    except OSError:
        pass  # no cache directory to write to: computed again next run
    return outputs, times


async def _run(
    problem: Problem, part: str, args: list[Any], not_none: bool, pool: Executor
) -> tuple[list[Any], list[float], bytes | None]:
    """The reference on ``args`` in one process, as EvalPlus runs it, with
    the answer as it came (None when run in parts); if the inputs or the
    outputs are past what one sandboxed call may carry (`plain`'s limits,
    the result cap), on each half in turn instead."""
    f = problem.fields
    try:
        sent = plain.dumps([[args, not_none], {}])
    except plain.NotPlain:
        sent = None
    if sent is not None:
        task = Call(
            program=f["prompt"] + f["canonical_solution"] + helper(f["entry_point"]),
            entry=ENTRY,
            args=sent,
            cpu_s=CPU_S,
        )
        out = await pool.execute(task)
        if out.status == "passed" and out.value is not None:
            got = _decode(out.value, len(args))
            if got is not None:
                return got[0], got[1], out.value
        elif not _too_large(out.status, out.reason):
            reason = out.reason.splitlines()[-1] if out.reason else out.status
            raise InputError(
                f"task {problem.id}: its canonical_solution does not run on its {part} inputs "
                f"({out.status}: {reason[:200]})"
            )
    if len(args) == 1:
        what = "input" if sent is None else "output"
        raise InputError(
            f"task {problem.id}: an {what} of its {part} inputs is too large or too deeply "
            f"nested for a sandboxed call ({plain.MAX_NODES:,} values, "
            f"{plain.MAX_BYTES >> 20} MB, depth {plain.MAX_DEPTH})"
        )
    half = len(args) // 2
    head = await _run(problem, part, args[:half], not_none, pool)
    tail = await _run(problem, part, args[half:], not_none, pool)
    return head[0] + tail[0], head[1] + tail[1], None


def _too_large(status: str, reason: str) -> bool:
    """Did a call fail only for the size of what it carried?"""
    return (status == "error" and reason == "result too large") or (
        status == "failed" and "NotData" in reason and ("too large" in reason or "larger" in reason)
    )
