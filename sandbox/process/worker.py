"""Sandbox template process: pre-warmed, clean, forks one child per job.

Started by the engine through `_launch` (no site hooks, nothing of the
engine imported) with an allowlisted environment (never the engine's), so
the template's memory holds no API key and forking it is safe. It reads
`protocol` frames on stdin and writes one Outcome per Job on stdout. This
module is the entry point and the frame loop; each job is run by
`template.Template` (fork, wait with a wall-clock backstop, reap, kill what
the child left behind, read a short tail of its output, remove the throwaway
directory), and the Outcome is decided by `verdict`.

Isolation (see `layers`): at start the template sets up, once, whatever
layers ``Hello.isolation`` asks for and the machine allows (namespaces, a
private tmpfs work root, cgroups it joins itself so every child starts in
them, a prepared Landlock ruleset); each child then applies its cheap half
(uid drop, Landlock) before any candidate code runs. The Ready frame lists
the layers in force and a warning for each one that is not.
"""

from __future__ import annotations

import gc

import msgspec

from .. import frames, protocol
from ..isolation import layers, workdir
from . import template

# isort: split
# Warm the modules candidates commonly import, so each fork gets them free
# (json and statistics: LiveCodeBench's environment star-imports them into
# every program, about 3 ms a fork when cold).
import bisect  # noqa: F401
import collections  # noqa: F401
import functools  # noqa: F401
import hashlib  # noqa: F401
import heapq  # noqa: F401
import itertools  # noqa: F401
import json  # noqa: F401
import math  # noqa: F401
import random  # noqa: F401
import re  # noqa: F401
import statistics  # noqa: F401
import string  # noqa: F401
import typing  # noqa: F401


def main() -> None:
    template.die_with_parent()
    # No SIGINT handling: the template has a session of its own, so a
    # terminal's Ctrl-C never reaches it (the engine decides when it stops).
    reader = frames.JobReader(0)
    try:
        hello = msgspec.msgpack.decode(reader.frame(), type=protocol.Hello)
    except EOFError:
        return
    frames.spin(hello.spin_s)
    slot = template.Template(hello)
    ready = protocol.Ready(
        pid=slot.conf.host_pid,
        layers=slot.layers,
        warnings=slot.warnings,
        missing=slot.missing,
        cgroups=slot.conf.cgroups,
    )
    frames.write_all(1, protocol.encode_frame(ready))
    # Everything the template holds now is permanent: frozen objects are never
    # scanned by a child's collector, so children copy fewer pages on write.
    gc.freeze()
    serve(slot, reader)
    slot.cleanup(-1)
    workdir.remove_tree(slot.work_root)
    layers.teardown(slot.conf)


def serve(slot: template.Template, reader: frames.JobReader) -> None:
    """Run jobs until the engine closes stdin, or a candidate breaks the template."""
    decoder = msgspec.msgpack.Decoder(protocol.JobHead)
    while True:
        try:
            job = decoder.decode(reader.frame())
            reader.read_program(job.size)
        except EOFError:
            return
        try:
            outcome = slot.run(job, reader)
        except template.SetupFault as exc:
            # Not the candidate's doing: the engine retries the job on a
            # fresh template (and never counts it against the candidate).
            fault = protocol.Outcome(
                id=job.id, status="infra_error", reason=str(exc)[:500], retire=True
            )
            frames.write_all(1, protocol.encode_frame(fault))
            return
        except Exception as exc:
            # Something this candidate did broke the template (its cleanup,
            # say): that is the candidate's error, and a fresh template
            # serves the next job.
            reason = f"the sandbox could not recover from this candidate: {exc!r}"[:500]
            error = protocol.Outcome(id=job.id, status="error", reason=reason)
            frames.write_all(1, protocol.encode_frame(error))
            return
        slot.send(outcome)
        if outcome.retire:
            return  # the engine starts a fresh template for the next job


if __name__ == "__main__":
    main()
