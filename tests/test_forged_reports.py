"""Red-team finding on the child's private report pipe, kept as a test: a
program that digs the template's token out of its own memory can write any
report (official scoring says so), but a setup failure it writes must not
become an ``infra_error``, which the pool retries and a run leaves out of n
("incomplete"): that would let a wrong answer drop out of the count."""

from __future__ import annotations

import anyio

from aioeval.executors.local import LocalPool
from aioeval.sandbox.process import harness
from aioeval.sandbox.protocol import Limits, Program

TOKEN = b"t" * 24


def _report(kind: bytes, payload: bytes = b"") -> bytes:
    return TOKEN + kind + harness.LEN.pack(len(payload)) + payload


def test_a_setup_failure_after_the_ready_mark_is_no_report() -> None:
    data = _report(harness.READY) + _report(harness.SETUP, b"no")
    assert harness.parse_report(memoryview(data), TOKEN) is None


def test_the_harness_s_own_reports_are_read() -> None:
    setup = harness.parse_report(memoryview(_report(harness.SETUP, b"no")), TOKEN)
    assert setup is not None and setup[0] == harness.SETUP and bytes(setup[1]) == b"no"
    data = _report(harness.READY) + _report(harness.FAILED, b"why")
    failed = harness.parse_report(memoryview(data), TOKEN)
    assert failed is not None and failed[0] == harness.FAILED and bytes(failed[1]) == b"why"


# A wrong answer that writes the harness's setup failure with the token it
# found in its own frames, then exits as the harness would.
FORGED_SETUP = """
import os, struct, sys
frame = sys._getframe()
while frame is not None:
    token, fd = frame.f_locals.get("token"), frame.f_locals.get("result_fd")
    if isinstance(token, bytes) and isinstance(fd, int):
        text = b"sandbox setup failed: not really"
        os.write(fd, token + b"S" + struct.pack("<I", len(text)) + text)
        os._exit(71)
    frame = frame.f_back
"""


def test_a_forged_setup_failure_is_the_program_s_failure() -> None:
    async def go() -> tuple[str, int]:
        async with LocalPool(workers=1, limits=Limits(cpu_s=3.0, wall_s=10.0)) as pool:
            out = await pool.execute(Program(program=FORGED_SETUP))
            return out.status, pool.infra_retries

    status, retries = anyio.run(go)
    assert (status, retries) == ("failed", 0)
