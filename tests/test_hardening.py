"""Hostile corpus: each program attacks the sandbox; each has an expected
verdict and the same after-checks: the engine is alive and answers, no
process of the candidate is left, the canary files are intact, the fake API
key appears in no output, and the engine's memory stayed small.

Run it inside a safety net (``tests/safety_net.sh python -m pytest
tests/test_hardening.py``): the bombs are bounded by the sandbox under test,
the net only guards against that sandbox being broken.
"""

from __future__ import annotations

import errno
import os
import socket
import textwrap
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from hostcheck import require_layers

from aioeval.executors.local import LocalPool
from aioeval.sandbox.isolation.layers import REQUIRED_ROOT, UID_BASE
from aioeval.sandbox.protocol import Call, Checked, Limits, Outcome, Program, Task
from aioeval.sandbox.values import plain

pytestmark = pytest.mark.anyio

SECRET = "sk-aioeval-test-7f3a9c1e55d24b0b"
LIMITS = Limits(
    cpu_s=1.0,
    wall_s=3.0,
    memory_mb=512,
    fsize_mb=8,
    nofile=64,
    nproc=32,
    disk_mb=32,
    output_tail=4096,
)
RSS_BOUND = 400 * 1024 * 1024
NOT_PASSED = {"failed", "error", "timeout"}


@pytest.fixture
def anyio_backend() -> str:
    # One backend is enough here: the corpus tests the sandbox, not the loop.
    return "asyncio"


@dataclass
class Env:
    pool: LocalPool
    canary: Path
    listener: socket.socket
    outcomes: list[Outcome]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    yield sock
    sock.close()


@pytest.fixture
async def env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: socket.socket
) -> AsyncIterator[Env]:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    canary = tmp_path / "canary.txt"
    canary.write_text("canary\n")
    async with LocalPool(workers=1, limits=LIMITS, isolation="best") as pool:
        # The corpus includes bombs; without every layer it is not safe (nor
        # meaningful) to run, and a layer the host offers must be there.
        require_layers(pool, REQUIRED_ROOT)
        state = Env(pool=pool, canary=canary, listener=listener, outcomes=[])
        yield state
        await _after_checks(state, tmp_path)


def _template_pids(pool: LocalPool) -> list[int]:
    return [s.ready.pid for s in pool._slots if s.ready is not None]


def _candidate_pids(pool: LocalPool) -> list[int]:
    """Live processes running under one of the pool's candidate uids."""
    uids = {str(UID_BASE + pid) for pid in _template_pids(pool)}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as fh:
                status = fh.read()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] and fields["Uid"].split()[0] in uids:
            if fields.get("State", "").split()[:1] != ["Z"]:
                found.append(int(name))
    return found


async def _after_checks(state: Env, tmp_path: Path) -> None:
    pool = state.pool
    assert _candidate_pids(pool) == []
    # A candidate that left a mark in the template's namespaces (network
    # counters, SysV ids) retired it on purpose: its cgroup is gone, which
    # the kernel allows only once it is empty.
    retired = any(o.retire for o in state.outcomes)
    for path in [p for s in pool._slots if s.ready for p in s.ready.cgroups if "/pids/" in p]:
        try:
            with open(os.path.join(path, "cgroup.procs")) as fh:
                listed = fh.read().split()
        except OSError as exc:
            # Removed with its template, as the kernel allows once empty: a
            # cgroup removed between open and read answers ENODEV.
            if retired and exc.errno in (errno.ENOENT, errno.ENODEV):
                continue
            raise
        assert listed == [str(s.ready.pid) for s in pool._slots if s.ready]
    # Alive and answering, on the same template unless it was retired.
    before = _template_pids(pool)
    assert (await pool.run("assert sum(range(4)) == 6")).status == "passed"
    assert retired or _template_pids(pool) == before
    assert state.canary.read_text() == "canary\n"
    journal = tmp_path / "outcomes.jsonl"
    journal.write_bytes(b"\n".join(msgspec.json.encode(o) for o in state.outcomes))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    with pytest.raises(BlockingIOError):
        state.listener.accept()  # no connection ever arrived
    with open("/proc/self/statm") as fh:
        rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    assert rss < RSS_BOUND


def _too_large(out: Outcome) -> bool:
    # Python ignores SIGXFSZ, so the write fails with EFBIG (a failure the
    # candidate could catch) unless something resets the signal (an error).
    return "File too large" in out.reason or "file size limit" in out.reason


async def run(state: Env, program: str | Task) -> Outcome:
    task = Program(program=textwrap.dedent(program)) if isinstance(program, str) else program
    out = await state.pool.execute(task)
    state.outcomes.append(out)
    return out


async def test_limits_proven_on_a_small_case(env: Env) -> None:
    # 100 sleeping processes against nproc=32: the rest must be refused.
    out = await run(
        env,
        """
        import os, time
        made = 0
        for _ in range(100):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            made += 1
        print("made", made)
        assert made < 32, made
        """,
    )
    assert out.status == "passed", out


async def test_fork_bomb(env: Env) -> None:
    out = await run(
        env,
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
    )
    assert out.status == "timeout", out


async def test_50_gb_allocation(env: Env) -> None:
    out = await run(env, "x = bytearray(50 * 2**30)")
    assert out.status == "failed" and "MemoryError" in out.reason, out


async def test_memory_spread_over_8_processes(env: Env) -> None:
    # 8 x 300 MB, each under the per-process limit, together far over the
    # slot's cgroup limit: the kernel kills them, the verdict says why.
    out = await run(
        env,
        """
        import os, time
        kids = []
        for _ in range(8):
            pid = os.fork()
            if pid == 0:
                block = bytearray(300 * 2**20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
        for pid in kids:
            os.waitpid(pid, 0)
        """,
    )
    assert out.status == "error" and "memory limit" in out.reason, out


async def test_one_10_gb_file(env: Env) -> None:
    out = await run(
        env,
        """
        chunk = b"x" * 2**20
        with open("big.bin", "wb") as fh:
            for _ in range(10 * 1024):
                fh.write(chunk)
        """,
    )
    assert out.status in NOT_PASSED and _too_large(out), out


async def test_many_8_mb_files(env: Env) -> None:
    out = await run(
        env,
        """
        chunk = b"x" * (8 * 2**20 - 1)
        for i in range(10_000):
            with open(f"f{i}.bin", "wb") as fh:
                fh.write(chunk)
        """,
    )
    assert out.status == "failed" and "No space left" in out.reason, out
    # The engine's view of the slot directory (under the tmpfs) stays empty.
    assert os.listdir(os.path.join(env.pool.work_root, "slot0")) == []


async def test_fd_exhaustion(env: Env) -> None:
    out = await run(
        env,
        """
        import os
        fds = []
        while True:
            fds.append(os.open("/dev/null", os.O_RDONLY))
        """,
    )
    assert out.status == "failed" and "Too many open files" in out.reason, out


async def test_1_gb_to_stdout(env: Env) -> None:
    out = await run(
        env,
        """
        import sys
        line = "y" * 2**20
        for _ in range(1024):
            sys.stdout.write(line)
        """,
    )
    assert out.status in NOT_PASSED and _too_large(out), out
    assert len(out.output_tail) <= LIMITS.output_tail


async def test_api_keys_from_environment(env: Env) -> None:
    out = await run(
        env,
        """
        import os
        found = {k: v for k, v in os.environ.items() if "KEY" in k or "TOKEN" in k}
        print(found)
        assert not found, found
        """,
    )
    assert out.status == "passed", out


@pytest.mark.parametrize("whose", ["ppid", "engine"])
async def test_api_keys_from_proc_environ(env: Env, whose: str) -> None:
    pid = "os.getppid()" if whose == "ppid" else str(os.getpid())
    out = await run(
        env,
        f"""
        import os
        data = open(f"/proc/{{{pid}}}/environ", "rb").read()
        print(data)
        """,
    )
    # Not even listed: the candidate's /proc is its PID namespace's.
    assert out.status == "failed" and "FileNotFoundError" in out.reason, out


async def test_tcp_to_localhost(env: Env) -> None:
    port = env.listener.getsockname()[1]
    out = await run(
        env,
        f"""
        import socket
        socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"hi")
        """,
    )
    assert out.status == "failed" and "Error" in out.reason, out


async def test_tcp_to_public_address(env: Env) -> None:
    require_layers(env.pool, ["network-namespace"])  # else it would reach the internet
    out = await run(
        env,
        """
        import socket
        socket.create_connection(("192.0.2.1", 80), timeout=2)
        """,
    )
    # Refused locally (Landlock, then no route): far below the 2 s timeout.
    assert out.status == "failed" and "timed out" not in out.reason, out
    assert out.wall_ms < 1000, out


async def test_udp_and_unix_sockets_reach_nothing(env: Env) -> None:
    out = await run(
        env,
        """
        import socket
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"x", ("127.0.0.1", 53))
        """,
    )
    assert out.status == "failed" and "unreachable" in out.reason, out


async def test_kill_the_parent(env: Env) -> None:
    out = await run(env, "import os\nos.kill(os.getppid(), 9)")
    assert out.status == "failed" and "PermissionError" in out.reason, out


async def test_double_forked_setsid_daemon(env: Env) -> None:
    out = await run(
        env,
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(600)
            os._exit(0)
        time.sleep(0.2)
        """,
    )
    assert out.status == "passed", out  # the program itself is fine


async def test_ignoring_signals_while_spinning(env: Env) -> None:
    out = await run(
        env,
        """
        import signal
        for sig in (signal.SIGALRM, signal.SIGTERM, signal.SIGXCPU, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            pass
        """,
    )
    assert out.status == "timeout", out


async def test_blocking_in_c_with_signals_masked(env: Env) -> None:
    out = await run(
        env,
        """
        import os, signal
        signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        r, w = os.pipe()
        os.read(r, 1)
        """,
    )
    assert out.status == "timeout" and "wall-clock" in out.reason, out


async def test_deep_recursion_segfault(env: Env) -> None:
    out = await run(
        env,
        """
        import pickle, sys
        sys.setrecursionlimit(10**8)
        # Python-to-Python calls no longer use the C stack (3.11); the C
        # pickler recursing into a deeply nested list does, once the guard
        # is lifted.
        x = []
        for _ in range(2 * 10**5):
            x = [x]
        pickle.dumps(x)
        """,
    )
    assert out.status == "error" and "SIGSEGV" in out.reason, out


async def test_os_exit_at_import(env: Env) -> None:
    out = await run(env, "import os\nos._exit(0)\ndef f():\n    return 1\n")
    assert out.status == "failed" and "before the check completed" in out.reason, out


async def test_sys_exit_in_the_function(env: Env) -> None:
    out = await run(
        env,
        """
        def candidate():
            import sys
            sys.exit(0)
        def check(f):
            assert f() == 1
        check(candidate)
        """,
    )
    assert out.status == "failed" and "SystemExit" in out.reason, out


async def test_printing_the_success_marker(env: Env) -> None:
    out = await run(
        env,
        """
        import os, sys
        for marker in ("passed", "P", "PASSED", "ok"):
            print(marker)
            sys.stderr.write(marker + "\\n")
        sys.stdout.flush()
        os._exit(0)
        """,
    )
    assert out.status == "failed", out


async def test_replacing_builtins(env: Env) -> None:
    out = await run(
        env,
        """
        import builtins, os, sys
        builtins.BaseException = int
        builtins.type = lambda *a: None
        builtins.str = lambda *a: "passed"
        os.write = lambda *a: 0
        os._exit = lambda *a: None
        sys.exit = lambda *a: None
        raise ValueError("still a failure")
        """,
    )
    assert out.status == "failed" and "still a failure" in out.reason, out


async def test_always_equal_result(env: Env) -> None:
    program = """
        class Same:
            def __eq__(self, other):
                return True
            __hash__ = object.__hash__
        def candidate(x):
            return Same()
        """
    program = textwrap.dedent(program)
    # A value judged by the engine (CRUXEval) must be plain data: refused.
    call = Call(program=program, entry="candidate", args=plain.dumps([[1], {}]))
    out = await run(env, call)
    assert out.status == "failed" and "plain" in out.reason.lower(), out
    # The official single-process model compares inside the candidate's own
    # interpreter, so it is fooled: the documented limit of that model.
    out = await run(env, program + "assert candidate(1) == 2\n")
    assert out.status == "passed", out
    # The strict model compares in the verifier, and never asks the
    # candidate's class whether it is equal: refused, with that reason.
    checked = Checked(
        program=program, entry="candidate", setup="", driver="assert candidate(1) == 2"
    )
    out = await run(env, checked)
    assert out.status == "failed" and "strict scoring" in out.reason, out


async def test_writing_outside_the_work_dir(env: Env) -> None:
    outside = f"/tmp/aioeval-hardening-{os.getpid()}"
    out = await run(
        env,
        f"""
        errors = []
        for path in ({str(env.canary)!r}, {outside!r}, "/dev/shm/aioeval-x", "/var/tmp/x"):
            try:
                with open(path, "w") as fh:
                    fh.write("owned")
            except OSError as exc:
                errors.append(type(exc).__name__)
        assert len(errors) == 4, errors
        open("inside.txt", "w").write("fine")
        """,
    )
    assert out.status == "passed", out
    assert not os.path.exists(outside)
    assert not os.path.exists("/dev/shm/aioeval-x")


async def test_thread_outlives_main_thread(env: Env) -> None:
    out = await run(
        env,
        """
        import threading, time
        def late():
            time.sleep(0.5)
            print("passed")
            while True:
                pass
        threading.Thread(target=late).start()
        """,
    )
    assert out.status == "passed", out
    assert out.wall_ms < LIMITS.wall_s * 1000


async def test_closing_stdout_and_stderr(env: Env) -> None:
    out = await run(
        env,
        """
        import os, sys
        sys.stdout.close()
        sys.stderr.close()
        os.close(1)
        os.close(2)
        """,
    )
    assert out.status == "passed", out


async def test_deleting_the_work_dir(env: Env) -> None:
    out = await run(
        env,
        """
        import os, shutil
        open("x", "w").write("x")
        shutil.rmtree(os.getcwd())
        """,
    )
    assert out.status in {"passed", "failed"}, out
    assert out.status != "infra_error"


FLOOD = textwrap.dedent(
    """
    import os, stat, struct, sys
    MASK = (1 << 64) - 1
    P1, P2, P5 = 11400714785074694791, 14029467366897019727, 2870177450012600261
    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & MASK
    def rotr(x, r):
        return ((x >> r) | (x << (64 - r))) & MASK
    def after(acc, lane):
        return rotl((acc + lane * P2) & MASK, 31) * P1 & MASK
    # Pairs (a, b) whose tuple hashes all collide: for each a, solve for
    # the lane b must have, and keep it when an int of that hash exists.
    final = (1 + (2 ^ (P5 ^ 3527539))) & MASK
    before = rotr(final * pow(P1, -1, 1 << 64) & MASK, 31)
    inv2 = pow(P2, -1, 1 << 64)
    M = (1 << 61) - 1
    keys = []
    a = 10
    while len(keys) < 60000:
        a += 1
        lane = (before - after(P5, a)) * inv2 & MASK
        if lane < M:
            keys.append((a, lane))
        elif lane > (1 << 64) - M:
            keys.append((a, lane - (1 << 64)))
    def pack_int(v):
        return b"\\xd3" + struct.pack(">q", v)
    body = b"\\xdf" + struct.pack(">I", len(keys))
    body += b"".join(b"\\x92" + pack_int(x) + pack_int(y) + b"\\xc0" for x, y in keys)
    # a Loaded frame whose one name carries the map, on the job's channel
    frame = b"\\x92\\xa6loaded\\x91\\x92\\xa1x" + body
    for fd in range(3, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.write(fd, struct.pack("<I", len(frame)) + frame)
        except OSError:
            pass
    os._exit(0)
    """
)


async def test_a_reply_that_floods_the_verifiers_hash_table(env: Env) -> None:
    """Tuple keys built to share one hash, in a frame the verifier decodes in
    C code its CPU timer cannot interrupt: the answer is the candidate's
    timeout (never a pass, never the engine's infra_error), and the slot is
    fresh for the next answer."""
    checked = Checked(program=FLOOD, entry="f", setup="", driver="assert f(1) == 2")
    out = await run(env, checked)
    assert out.status == "timeout" and "verifier could not finish" in out.reason, out
    # Ended by the kernel's CPU ceiling while decoding (on a loaded machine
    # the engine's wall-clock budget for the verifier may run out first).
    assert "CPU budget" in out.reason or "within 4s" in out.reason, out
    honest = Checked(
        program="def f(x):\n    return x + 1\n", entry="f", setup="", driver="assert f(1) == 2"
    )
    assert (await run(env, honest)).status == "passed"


SWELL = textwrap.dedent(
    """
    import os, stat, struct
    # 16 MB of empty lists: about a gigabyte once decoded.
    n = 16 * 1024 * 1024 - 64
    frame = b"\\x92\\xa6loaded\\x91\\x92\\xa1x" + b"\\xdd" + struct.pack(">I", n) + b"\\x90" * n
    for fd in range(3, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.write(fd, struct.pack("<I", len(frame)) + frame)
        except OSError:
            pass
    os._exit(0)
    """
)


def _verifier_cgroups(pool: LocalPool) -> dict[str, str]:
    """The verifier's cgroup per controller, from /proc/<pid>/cgroup of the
    process in the first cgroup it reported: the verifier itself, init of
    its PID namespace below the process the engine started (after whose pid
    its cgroups are named)."""
    ready = pool._slots[0].verifier_ready
    assert ready is not None and ready.cgroups, ready
    with open(os.path.join(ready.cgroups[0], "cgroup.procs")) as fh:
        (pid,) = fh.read().split()
    with open(f"/proc/{pid}/cgroup") as fh:
        lines = [line.strip().split(":", 2) for line in fh]
    return {ctrl: path for _, ctrls, path in lines for ctrl in (ctrls or "unified").split(",")}


async def test_a_reply_that_swells_when_decoded_is_bounded_while_it_is(env: Env) -> None:
    """A reply that grows a thousand-fold when decoded meets the verifier's
    memory limit during the decode: the answer fails, the verifier lives on
    in its own cgroups, and the next answer passes on the same verifier."""
    honest = Checked(
        program="def f(x):\n    return x + 1\n", entry="f", setup="", driver="assert f(1) == 2"
    )
    assert (await run(env, honest)).status == "passed"
    verifier = env.pool._slots[0].verifier
    assert verifier is not None
    own = _verifier_cgroups(env.pool)
    for ctrl in ("memory", "pids", "cpu"):
        path = own.get(ctrl) or own.get("unified", "")
        assert os.path.basename(path) == f"aioeval-{verifier.proc.pid}", own
    out = await run(env, Checked(program=SWELL, entry="f", setup="", driver="assert f(1) == 2"))
    if out.status == "failed":
        assert "memory limit" in out.reason, out
        assert (await run(env, honest)).status == "passed"
        assert env.pool._slots[0].verifier is verifier
    else:
        # A loaded machine: decoding to the limit and freeing it outlasted
        # the check's budget. Still bounded, still no pass.
        assert out.status == "timeout" and "verifier could not finish" in out.reason, out
        assert (await run(env, honest)).status == "passed"


async def test_rebinding_a_module_the_prompt_imported(env: Env) -> None:
    """The prompt imports ``math`` and the test compares with ``math.fabs``:
    a wrong answer that rebinds ``math`` to a function whose ``fabs``
    always says 0 would pass if the test read the candidate's name. The
    test keeps the prompt's modules, classes and constants."""
    prompt = "import math\n\ndef find_zero(xs: list):\n    pass\n"
    setup = (
        "def check(candidate):\n"
        "    for coeffs in ([1, 2], [-6, 11, -6, 1]):\n"
        "        x = candidate(list(coeffs))\n"
        "        assert math.fabs(sum(c * x**i for i, c in enumerate(coeffs))) < 1e-4\n"
    )
    forged = (
        "import math as _real\n"
        "def find_zero(xs):\n    return 0.0\n"
        "def math():\n    pass\n"
        "math.fabs = lambda v: 0.0\n"
    )
    honest = "def find_zero(xs):\n    return -xs[0] / xs[1] if len(xs) == 2 else 1.0\n"
    for program, status in ((forged, "failed"), (honest, "passed")):
        task = Checked(
            program=prompt + program,
            entry="find_zero",
            prelude=prompt,
            setup=setup,
            driver="check(find_zero)",
        )
        out = await run(env, task)
        assert out.status == status, out
