"""Sandbox properties, one by one, through the real template-fork pool."""

from __future__ import annotations

import os
import signal
import time

import anyio
import pytest
from hostcheck import descendants

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Call, Checked, Limits
from aioeval.sandbox.values import plain

pytestmark = pytest.mark.anyio

FAST = Limits(cpu_s=1.0, wall_s=3.0, memory_mb=1024, fsize_mb=8)
SPIN = Limits(cpu_s=1.0, wall_s=60.0, memory_mb=1024, fsize_mb=8)
"""For spinning candidates that must end on their CPU budget: a wall-clock
backstop far beyond it, so a loaded machine (slower CPU time) cannot make
the backstop fire first."""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as fh:
            kids += [int(x) for x in fh.read().split()]
    return kids


async def test_pass_fail_and_error_verdicts() -> None:
    async with LocalPool(workers=2, limits=FAST) as pool:
        assert (await pool.run("assert sum([1, 2]) == 3")).status == "passed"
        out = await pool.run("assert 1 == 2, 'nope'")
        assert out.status == "failed" and "AssertionError: nope" in out.reason
        out = await pool.run("def f(:\n  pass")
        assert out.status == "error" and "SyntaxError" in out.reason
        out = await pool.run("raise ValueError('bad')")
        assert out.status == "failed" and "ValueError: bad" in out.reason


@pytest.mark.one_loop
async def test_every_candidate_starts_from_the_same_random_state() -> None:
    """A forked child's ``random`` reseeds itself from system entropy; the
    template's seeded state is restored, so a test or answer that draws
    from the module gets the same numbers on every run, in every slot, in
    a program and in a served child alike."""
    import random

    expected = repr(random.Random(0).random())
    program = "import random\nprint(repr(random.random()))\n"
    async with LocalPool(workers=2, limits=FAST) as pool:
        outs = [await pool.run(program) for _ in range(4)]
        served = await pool.execute(
            Checked(
                program="import random\ndef f():\n    return random.random()\n",
                entry="f",
                setup=f"def check(f):\n    assert repr(f()) == {expected!r}\n",
                driver="check(f)",
            )
        )
    assert [o.output_tail.strip() for o in outs] == [expected] * 4
    assert served.status == "passed", served.reason


@pytest.mark.one_loop
@pytest.mark.parametrize(
    "program",
    [
        "import sys\nsys.exit(0)",
        "import os\nos._exit(0)",
        "print('passed')\nimport os\nos._exit(0)",
        "raise SystemExit(0)",
        "def check(c):\n    import sys; sys.exit(0)\ncheck(1)",
    ],
)
async def test_early_exit_is_never_a_pass(program: str) -> None:
    async with LocalPool(workers=1, limits=FAST) as pool:
        out = await pool.run(program)
    assert out.status == "failed", out


@pytest.mark.one_loop
async def test_printed_marker_or_forged_report_is_not_a_pass() -> None:
    # The candidate writes plausible "pass" bytes to every descriptor it has,
    # then exits before the harness could report.
    program = (
        "import os\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, b'P' * 64)\n"
        "    except OSError:\n"
        "        pass\n"
        "print('passed')\n"
        "os._exit(0)\n"
    )
    async with LocalPool(workers=1, limits=FAST) as pool:
        out = await pool.run(program)
    assert out.status == "failed"


@pytest.mark.one_loop
async def test_cpu_timeout_kills_the_whole_group() -> None:
    program = (
        "import os, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "print('GRANDCHILD', pid, flush=True)\n"
        "while True:\n"
        "    pass\n"
    )
    async with LocalPool(workers=1, limits=SPIN) as pool:
        out = await pool.run(program)
        assert out.status == "timeout" and "CPU budget" in out.reason
        # rusage is tick-sampled and lags the kernel's exact CPU clock that
        # RLIMIT_CPU uses, so only a loose lower bound is meaningful here.
        assert out.cpu_ms >= 500
        assert "GRANDCHILD" in out.output_tail
        # The grandchild's pid is its namespace's; from here, nothing is
        # left below the template.
        template = pool._slots[0].ready
        assert template is not None and descendants(template.pid) == []


@pytest.mark.one_loop
async def test_sleeping_candidate_hits_the_wall_backstop() -> None:
    limits = Limits(cpu_s=1.0, wall_s=1.5)
    async with LocalPool(workers=1, limits=limits) as pool:
        out = await pool.run("import time\ntime.sleep(30)")
    assert out.status == "timeout" and "wall-clock" in out.reason
    assert 1400 <= out.wall_ms < 5000


@pytest.mark.one_loop
async def test_ignoring_sigxcpu_still_times_out() -> None:
    program = (
        "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n"
    )
    async with LocalPool(workers=1, limits=SPIN) as pool:
        out = await pool.run(program)
    assert out.status == "timeout"


@pytest.mark.one_loop
async def test_output_flood_is_capped() -> None:
    # 1 GB of output: stopped by the file-size limit, tail kept short, and the
    # engine never holds more than the tail.
    program = "import os\nchunk = b'x' * 65536\nfor _ in range(16384):\n    os.write(1, chunk)\n"
    async with LocalPool(workers=1, limits=FAST) as pool:
        out = await pool.run(program)
    # Python ignores SIGXFSZ, so the write fails with EFBIG inside the candidate.
    assert out.status in ("failed", "error")
    assert "File too large" in out.reason or "file size" in out.reason
    assert 0 < len(out.output_tail) <= FAST.output_tail


async def test_engine_secrets_are_invisible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    program = (
        "import os\n"
        "print(dict(os.environ))\n"
        "for pid in (os.getppid(), 1):\n"
        "    try:\n"
        "        print(open(f'/proc/{pid}/environ', 'rb').read())\n"
        "    except OSError as e:\n"
        "        print('denied', e)\n"
    )
    async with LocalPool(workers=1, limits=FAST) as pool:
        out = await pool.run(program)
    assert out.status == "passed"
    assert "sk-test-secret" not in out.output_tail
    assert "OPENAI_API_KEY" not in out.output_tail
    assert "PATH" in out.output_tail


async def test_call_job_returns_plain_data() -> None:
    async with LocalPool(workers=1, limits=FAST) as pool:
        program = "def f(x, y=0):\n    return {'a': [x, (1.5, None)], 'b': {3}, 'y': y}"
        out = await pool.execute(
            Call(program=program, entry="f", args=plain.dumps([[-2], {"y": 7}]))
        )
        assert out.status == "passed" and out.value is not None
        assert plain.loads(out.value) == {"a": [-2, (1.5, None)], "b": {3}, "y": 7}
        # An object that claims to equal anything is not plain data.
        program = (
            "class A:\n    def __eq__(self, o):\n        return True\ndef f():\n    return A()"
        )
        out = await pool.execute(Call(program=program, entry="f", args=plain.dumps([[], {}])))
        assert out.status == "failed" and "not plain" in out.reason
        # Vetted source text (a dataset's own input expression) is evaluated as written.
        out = await pool.execute(
            Call(program="def f(s):\n    return s[::-1]", entry="f", args_source="'ab' * 2")
        )
        assert out.status == "passed" and out.value is not None
        assert plain.loads(out.value) == "baba"


async def test_template_crash_is_infra_error_then_retried() -> None:
    async with LocalPool(workers=1, limits=Limits(cpu_s=2.0, wall_s=5.0)) as pool:
        template = pool._slots[0].ready
        assert template is not None

        async def kill_while_it_runs() -> None:
            # Once the candidate is running (a child below the template),
            # never before: a kill racing the job's start is another test.
            with anyio.fail_after(60):
                while not descendants(template.pid):
                    await anyio.sleep(0.01)
            os.kill(template.pid, signal.SIGKILL)

        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_while_it_runs)
            out = await pool.run("import time\ntime.sleep(1.5)")
        assert out.status == "passed"  # retried once on a fresh template
        assert pool.infra_retries == 1
        assert pool._slots[0].ready is not None and pool._slots[0].ready.pid != template.pid


async def test_cancellation_leaves_no_processes() -> None:
    pool = LocalPool(workers=2, limits=Limits(cpu_s=30.0, wall_s=60.0))
    await pool.start()
    templates = [s.ready.pid for s in pool._slots if s.ready is not None]
    program = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(120)\ntime.sleep(120)\n"
    children: list[int] = []
    async with anyio.create_task_group() as tg:
        for _ in range(2):
            tg.start_soon(pool.run, program)
        # Cancel once both candidates run (each template has a child).
        with anyio.fail_after(60):
            while not all(_children(pid) for pid in templates):
                await anyio.sleep(0.01)
        children = [kid for pid in templates for kid in _children(pid)]
        tg.cancel_scope.cancel()
    await pool.aclose()
    assert len(children) >= 2
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in templates + children):
        await anyio.sleep(0.05)
    assert not [p for p in templates + children if _alive(p)]


async def test_concurrency_is_bounded_by_workers() -> None:
    async with LocalPool(workers=2, limits=FAST) as pool:
        t0 = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(pool.run, "import time\ntime.sleep(0.3)")
        elapsed = time.perf_counter() - t0
    # 4 sleeps of 0.3 s on 2 slots take two rounds, never one.
    assert elapsed >= 0.55


async def test_a_child_that_cannot_be_set_up_is_the_engines_fault() -> None:
    """A limit the kernel refuses (more open files than it allows any
    process) fails every child's setup: each job is infra_error with the
    cause, never the answer's error, in both job kinds."""
    limits = Limits(cpu_s=1.0, wall_s=3.0, memory_mb=1024, fsize_mb=8, nofile=2**31 - 1)
    async with LocalPool(workers=1, limits=limits) as pool:
        out = await pool.run("x = 1")
        assert out.status == "infra_error" and "sandbox setup failed" in out.reason, out
        checked = Checked(program="def f():\n    return 1\n", entry="f", setup="", driver="f()")
        out = await pool.execute(checked)
        assert out.status == "infra_error" and "sandbox setup failed" in out.reason, out


def _memory_holds(pid: int, needle: bytes) -> bool:
    """Does any readable, writable mapping of process ``pid`` contain ``needle``?"""
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("rw"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                if needle in mem.read(end - start):
                    return True
            except OSError:
                continue
    return False


@pytest.mark.skipif(os.geteuid() != 0, reason="reading another process's memory needs root")
async def test_no_candidate_text_survives_in_the_template() -> None:
    """Official scoring: a candidate's program and its failure message (the
    report it writes on its pipe) are gone from the template's memory once
    the job is done, so the next child, forked from that memory, cannot
    find a sibling's answer there."""
    token = os.urandom(12).hex()
    program = f"secret = {token!r}\nraise AssertionError('answer: ' + secret * 40)\n"
    async with LocalPool(workers=1, limits=FAST) as pool:
        out = await pool.run(program)
        assert out.status == "failed" and token in out.reason
        # The template wipes once the reason is sent, so look after the next
        # job: the memory a later child is forked from.
        assert (await pool.run("pass\n")).status == "passed"
        pid = pool._slots[0].ready.pid  # type: ignore[union-attr]
        assert not _memory_holds(pid, token.encode())
