"""PID and IPC namespaces, through the real sandbox: what a candidate leaves
behind does not reach the next candidate on its slot, nor the host.

Run inside the safety net (``tests/safety_net.sh python -m pytest ...``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import anyio
import msgspec
import pytest
from hostcheck import (
    assert_nothing_left,
    candidate_uids,
    ipc_objects,
    processes_of,
    require_layers,
    template_pids,
)

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Limits, Outcome

pytestmark = pytest.mark.anyio

LIMITS = Limits(cpu_s=3.0, wall_s=8.0, memory_mb=256, fsize_mb=8, disk_mb=32, nproc=64)
KEY = 0x5A000000 + ((os.getpid() & 0xFFFF) << 4)
KEYS = frozenset(KEY + i for i in range(4))

# Four 60 MB segments (about all that kernel.shmall allows under a 256 MB
# limit), touched, detached, never removed, mode 0666; a message queue with messages; a
# semaphore set. Before the IPC namespace, these stayed charged to the
# slot's memory cgroup and on the host after the run.
HOARD = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
for i in range(4):
    shmid = libc.shmget({KEY} + i, ctypes.c_size_t(60 * 2**20), 0o1666)
    assert shmid >= 0, ("shmget", ctypes.get_errno())
    addr = libc.shmat(shmid, None, 0)
    assert addr not in (None, ctypes.c_void_p(-1).value), ("shmat", ctypes.get_errno())
    ctypes.memset(addr, 7, 60 * 2**20)
    libc.shmdt(ctypes.c_void_p(addr))  # detached, but charged until removed
queue = libc.msgget({KEY}, 0o1666)
assert queue >= 0, ("msgget", ctypes.get_errno())
msg = ctypes.create_string_buffer(b"\\1\\0\\0\\0\\0\\0\\0\\0" + b"m" * 1024)
for _ in range(8):
    assert libc.msgsnd(queue, msg, 1024, 0o4000) == 0, ("msgsnd", ctypes.get_errno())
assert libc.semget({KEY}, 4, 0o1666) >= 0, ("semget", ctypes.get_errno())
"""
# 150 MB, touched: passes on a clean slot; with the segments above still
# charged to the slot's cgroup, the kernel's OOM killer ends it.
CANONICAL = """
block = bytearray(150 * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
assert sorted([3, 1, 2]) == [1, 2, 3]
"""
LOOK_FOR_THEM = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for call in (lambda: libc.shmget({KEY}, 0, 0), lambda: libc.msgget({KEY}, 0),
             lambda: libc.semget({KEY}, 0, 0)):
    assert call() == -1 and ctypes.get_errno() == 2, "a leftover object is visible"
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _pool(pool: LocalPool) -> LocalPool:
    await pool.start()
    try:
        require_layers(pool, ("ipc-namespace", "pid-namespace", "cgroup-memory"))
    except BaseException:
        await pool.aclose()
        raise
    return pool


async def test_sysv_objects_do_not_outlive_their_candidate() -> None:
    pool = await _pool(LocalPool(workers=1, limits=LIMITS))
    try:
        out = await pool.run(HOARD)
        assert out.status == "passed", out
        assert ipc_objects(set(KEYS), set()) == []  # never on the host
        for _ in range(5):
            out = await pool.run(CANONICAL)
            assert out.status == "passed", out  # the slot is not poisoned
        out = await pool.run(LOOK_FOR_THEM)
        assert out.status == "passed", out
        assert_nothing_left(pool, KEYS)
    finally:
        await pool.aclose()
    # A later run's candidate finds nothing either.
    async with LocalPool(workers=1, limits=LIMITS) as later:
        out = await later.run(LOOK_FOR_THEM)
        assert out.status == "passed", out
    assert ipc_objects(set(KEYS), set()) == []


SECRET = "sk-aioeval-cmdline-5c1d7e"


@pytest.fixture
def secret_process() -> Iterator[int]:
    """A process of ours with a key on its command line (killed by pid)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", SECRET])
    yield proc.pid
    proc.kill()
    proc.wait()


async def test_other_processes_are_invisible(secret_process: int) -> None:
    program = f"""
        import os
        pids = sorted(p for p in os.listdir("/proc") if p.isdigit())
        assert pids == [str(os.getpid())], pids
        for pid in (1, {secret_process}, {os.getpid()}):
            try:
                open(f"/proc/{{pid}}/cmdline", "rb").read()
            except OSError:
                continue
            raise AssertionError(f"/proc/{{pid}}/cmdline is readable")
        try:
            os.kill(1, 0)
        except OSError:
            pass
        else:
            raise AssertionError("the template can be signalled")
        print(os.getpid(), pids)
    """
    pool = await _pool(LocalPool(workers=1, limits=LIMITS))
    try:
        out = await pool.run(textwrap.dedent(program))
        assert out.status == "passed", out
        assert SECRET not in out.output_tail
        out = await pool.run(CANONICAL)
        assert out.status == "passed", out
        assert_nothing_left(pool)
    finally:
        await pool.aclose()


async def test_nothing_outlives_a_killed_template() -> None:
    # Daemons the candidate started (own session, double fork) die with the
    # template's PID namespace when the template itself is killed outright.
    program = """
        import os, time
        for _ in range(3):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(600)
                os._exit(0)
        time.sleep(600)
    """
    limits = msgspec.structs.replace(LIMITS, wall_s=2.0)
    pool = await _pool(LocalPool(workers=1, limits=limits))
    try:
        first = template_pids(pool)[0]
        uids = candidate_uids(pool)
        outcomes = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: _collect(pool, textwrap.dedent(program), outcomes))
            with anyio.fail_after(60):
                while len(processes_of(uids)) < 4:  # the candidate and 3 daemons
                    await anyio.sleep(0.02)
            os.kill(first, signal.SIGKILL)  # a template we started
        # Retried on a fresh template, where it sleeps into the backstop.
        assert outcomes[0].status == "timeout", outcomes
        assert pool.infra_retries == 1
        with anyio.fail_after(60):
            while processes_of(uids):
                await anyio.sleep(0.02)
    finally:
        await pool.aclose()
    assert_nothing_left(pool)


async def _collect(pool: LocalPool, program: str, into: list[Outcome]) -> None:
    into.append(await pool.run(program))


async def test_host_shared_memory_is_out_of_reach() -> None:
    # Another program's POSIX shared memory, world-readable as many are.
    shm = f"/dev/shm/aioeval-test-{os.getpid()}"
    with open(shm, "w") as fh:
        fh.write(SECRET)
    os.chmod(shm, 0o644)
    program = f"""
        import os
        assert os.listdir("/dev/shm") == [], os.listdir("/dev/shm")
        try:
            open({shm!r}).read()
        except OSError:
            pass
        else:
            raise AssertionError("read another program's shared memory")
    """
    try:
        pool = await _pool(LocalPool(workers=1, limits=LIMITS))
        try:
            require_layers(pool, ["private-shm"])
            out = await pool.run(textwrap.dedent(program))
            assert out.status == "passed", out
            assert SECRET not in out.output_tail
            assert_nothing_left(pool)
        finally:
            await pool.aclose()
    finally:
        os.unlink(shm)


async def test_dev_holds_only_the_harmless_nodes() -> None:
    """/dev offers no pty (a host-wide budget: kernel.pty.max), no disk and
    no other device; what honest programs use still works."""
    program = """
        import os, sys, subprocess, errno
        names = set(os.listdir("/dev"))
        assert names <= {"null", "zero", "full", "random", "urandom", "fd", "stdin",
                         "stdout", "stderr", "shm", "mqueue"}, sorted(names)
        for path in ("/dev/ptmx", "/dev/pts/ptmx", "/dev/tty", "/dev/mem", "/dev/kmsg"):
            try:
                os.close(os.open(path, os.O_RDWR))
            except OSError:
                pass
            else:
                raise AssertionError("opened " + path)
        try:
            os.openpty()
        except OSError:
            pass
        else:
            raise AssertionError("got a pty")
        try:
            open("/dev/made-here", "w")
        except OSError:
            pass
        else:
            raise AssertionError("wrote a node into /dev")
        # An honest program's view: the usual nodes behave.
        with open("/dev/null", "w") as sink:
            sink.write("x")
        assert len(open("/dev/urandom", "rb").read(16)) == 16
        assert open("/dev/zero", "rb").read(4) == bytes(4)
        assert os.urandom(8) and os.path.exists("/dev/fd/0")
        out = subprocess.run([sys.executable, "-c", "print(7)"], capture_output=True, text=True)
        assert out.stdout == "7\\n", out
        print("dev ok", file=open("/dev/stdout", "w"))
    """
    pool = await _pool(LocalPool(workers=1, limits=LIMITS))
    try:
        require_layers(pool, ["minimal-dev"])
        out = await pool.run(textwrap.dedent(program))
        assert out.status == "passed", out
        assert "dev ok" in out.output_tail
    finally:
        await pool.aclose()
