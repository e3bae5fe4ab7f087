"""Nothing a candidate marks survives it, and its CPU is counted whole.

A model searching for the expected outputs can learn, from whether the test
calls it again, which of its answers passed; it must have nowhere to keep
that for the next sample. Each test here has one candidate leave a mark and
the next one on the same slot look for it, through the real sandbox with
every layer on. Also here: CPU spent by helpers nobody waits for counts
against the budget (and cannot make a candidate look starved), and what a
candidate writes into its reason is bounded.

Run inside the safety net (``tests/safety_net.sh``), as CI does.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import anyio
from hostcheck import require_layers

import aioeval
from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Limits, Outcome, Program
from aioeval.suites.human_eval.suite import load_problems

LIMITS = Limits(cpu_s=1.0, wall_s=6.0, memory_mb=512)


def _run_in_order(*programs: str, limits: Limits = LIMITS) -> list[Outcome]:
    """Run the programs one after another on one slot (one template)."""

    async def go() -> list[Outcome]:
        async with LocalPool(workers=1, limits=limits) as pool:
            require_layers(
                pool, ("pid-namespace", "pid-shuffle", "landlock", "seccomp", "cgroup-cpu")
            )
            return [await pool.execute(Program(program=textwrap.dedent(p))) for p in programs]

    return anyio.run(go)


def test_locks_and_flags_on_stdout_do_not_survive() -> None:
    mark = """
        import fcntl, struct
        F_OFD_SETLK = 37
        try:  # refused by the filter where it is on; else it must not survive
            fcntl.fcntl(1, F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 1 << 40, 1, 0))
        except OSError as exc:
            assert exc.errno == 37, exc
        fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | 0o4000)
        fcntl.fcntl(1, 10, 42)  # F_SETSIG
        """
    look = """
        import fcntl, struct
        try:
            lock = fcntl.fcntl(1, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 1 << 40, 1, 0))
        except OSError as exc:
            assert exc.errno == 37, exc
        else:
            assert struct.unpack("hhqqi", lock)[0] == fcntl.F_UNLCK, "a lock survived"
        assert not fcntl.fcntl(1, fcntl.F_GETFL) & 0o4000, "a flag survived"
        assert fcntl.fcntl(1, 11) == 0, "a signal survived"  # F_GETSIG
        """
    first, second = _run_in_order(mark, look)
    assert first.status == "passed", first
    assert second.status == "passed", second


def test_the_next_pid_cannot_be_chosen() -> None:
    """The previous candidate cannot steer the next one's pid (ns_last_pid is
    reset at random before every fork), so a pid carries no message."""
    mark = """
        import os
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print("last", pid)
        """
    look = "import os\nprint('me', os.getpid())\n"
    outs = _run_in_order(*[mark, look] * 4)
    assert all(o.status == "passed" for o in outs), outs
    for a, b in zip(outs[::2], outs[1::2], strict=True):
        last = int(a.output_tail.split()[1])
        me = int(b.output_tail.split()[1])
        assert abs(me - (last + 1)) > 3, (last, me)


def test_host_counters_and_watches_are_out_of_reach() -> None:
    probe = """
        import ctypes, errno, glob, os
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.inotify_init1(0) == -1 and ctypes.get_errno() == errno.EPERM, "inotify"
        readable = []
        for path in glob.glob("/sys/fs/cgroup/*/*") + glob.glob("/sys/fs/cgroup/*"):
            try:
                os.listdir(path) if os.path.isdir(path) else open(path).read(1)
                readable.append(path)
            except OSError:
                pass
        try:
            os.listdir("/sys/fs/cgroup")
            readable.append("/sys/fs/cgroup")
        except OSError:
            pass
        assert not readable, readable[:5]
        assert os.cpu_count() >= 1
        open("/sys/devices/system/cpu/online").read()
        """
    (out,) = _run_in_order(probe)
    assert out.status == "passed", out


def test_memory_files_cannot_be_executed() -> None:
    """Landlock confines execution to system directories; a memfd (stdout
    included) is in none, and vm.memfd_noexec keeps it that way."""
    probe = """
        import os
        data = open("/usr/bin/true", "rb").read()
        refused = 0
        for fd in (os.memfd_create("x"), 1):
            os.write(fd, data)
            pid = os.fork()
            if pid == 0:
                try:
                    os.execv(f"/proc/self/fd/{fd}", ["x"])
                except OSError:
                    os._exit(3)
            _, status = os.waitpid(pid, 0)
            refused += os.waitstatus_to_exitcode(status) == 3
        assert refused == 2, refused
        """
    (out,) = _run_in_order(probe)
    assert out.status == "passed", out


HELPERS_NOBODY_WAITS_FOR = """
    import os, signal, time
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps them
    r, w = os.pipe()
    for _ in range(3):
        if os.fork() == 0:
            t = time.process_time()
            while time.process_time() - t < 0.9:
                pass
            os._exit(0)
    os.close(w)
    os.read(r, 1)  # end of file once the last helper has exited, however slow
    """


def test_cpu_of_helpers_nobody_waits_for_counts() -> None:
    # A backstop far beyond the helpers' 2.7 s of CPU, however loaded the machine.
    limits = Limits(cpu_s=LIMITS.cpu_s, wall_s=60.0, memory_mb=LIMITS.memory_mb)
    (out,) = _run_in_order(HELPERS_NOBODY_WAITS_FOR, limits=limits)
    assert out.status == "timeout" and "CPU budget" in out.reason, out
    # Counted past the budget (the parent itself spends next to none): how
    # far past depends on when the stop lands on a loaded machine.
    assert out.cpu_ms > limits.cpu_s * 1000, out


def test_a_busy_candidate_cannot_pass_for_starved(tmp_path: Path) -> None:
    """Spinning helpers the kernel reaps, then waiting out the wall clock:
    the tree used its CPU, so this is the candidate's timeout, never an
    infra_error that would drop it out of n."""
    spin = """
        import os, signal, time
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        while True:
            end = time.monotonic() + 0.4
            for _ in range(10):
                if os.fork() == 0:
                    while time.monotonic() < end:
                        pass
                    os._exit(0)
            while time.monotonic() < end:
                pass
        """
    (out,) = _run_in_order(spin, limits=Limits(cpu_s=2.0, wall_s=4.0, memory_mb=512))
    assert out.status == "timeout", out


def test_a_forged_reason_is_bounded(tmp_path: Path) -> None:
    """Official scoring lets a candidate write its own report; whatever it
    writes, its reason in results.jsonl stays short."""
    forge = textwrap.dedent(
        """
            return False
        import os, struct, sys
        f = sys._getframe(1)
        while "token" not in f.f_locals:
            f = f.f_back
        payload = b"\\x1b[2J" + b"A" * 4_000_000
        os.write(f.f_locals["result_fd"], f.f_locals["token"] + b"E" + struct.pack("<I", len(payload)) + payload)
        os._exit(0)
        """
    )
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": forge}) + "\n")
    cfg = aioeval.load_config(overrides=["params.scoring=official"])
    spec = aioeval.RunSpec(
        benchmark="human-eval", config=cfg, samples=str(samples), out_dir=str(tmp_path / "r")
    )
    anyio.run(aioeval.evaluate, spec)
    row: dict[str, Any] = json.loads((tmp_path / "r" / "results.jsonl").read_text())
    assert row["status"] == "error" and len(row["reason"]) <= 2000
    assert (tmp_path / "r" / "results.jsonl").stat().st_size < 100_000
    assert load_problems()[0].id == "HumanEval/0"


def test_sysv_ids_carry_no_count_to_the_next_candidate() -> None:
    """SysV ids come from a cursor in the IPC namespace that removing the
    objects does not reset: creating and removing k queues moves the next
    candidate's first id by k, a number it can read. Whatever the previous
    candidate did, the next one's first ids are the same."""
    look = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        ids = [libc.shmget(0, 1, 0o1600), libc.msgget(0, 0o1600), libc.semget(0, 1, 0o1600)]
        assert min(ids) >= 0, ctypes.get_errno()
        print(*ids)
        """
    mark = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        for _ in range(37):
            libc.shmctl(libc.shmget(0, 1, 0o1600), 0, None)
            libc.msgctl(libc.msgget(0, 0o1600), 0, None)
            libc.semctl(libc.semget(0, 1, 0o1600), 0, 0)
        """
    outs = _run_in_order(look, mark, look)
    assert all(o.status == "passed" for o in outs), outs
    assert outs[0].output_tail == outs[2].output_tail, (outs[0].output_tail, outs[2].output_tail)


def test_reading_a_file_leaves_no_mark_in_its_access_time() -> None:
    """A read updates the file's access time (relatime: once a day per file)
    on a filesystem mounted with atime updates, where the next candidate, a
    later run, can stat it: one bit per readable file. In the template's
    mount namespace nothing candidates read changes an access time."""
    probe = """
        import glob, os
        files = glob.glob("/usr/share/*/*") + glob.glob("/usr/share/*/*/*")
        # relatime updates an access time that is not newer than the
        # modification time: make sure some files qualify.
        stale = []
        for path in files:
            try:
                st = os.stat(path)
            except OSError:
                continue
            if os.path.isfile(path) and st.st_size and st.st_atime <= st.st_mtime:
                stale.append(path)
        assert stale, "no file with an access time that a read would update"
        for path in stale[:50]:
            before = os.stat(path).st_atime_ns
            with open(path, "rb") as fh:
                fh.read(1)
            assert os.stat(path).st_atime_ns == before, path
        """
    (out,) = _run_in_order(probe, limits=Limits(cpu_s=5.0, wall_s=20.0, memory_mb=512))
    assert out.status == "passed", out


def test_network_counters_carry_no_count_to_the_next_candidate() -> None:
    """The template's network namespace keeps statistics every candidate can
    read: k UDP sends with no route are ``OutNoRoutes`` k for the next one.
    Whatever the previous candidate sent, the next one reads the same."""
    look = """
        import hashlib
        with open("/proc/net/snmp") as f, open("/proc/net/snmp6") as g:
            snmp, snmp6 = f.read(), g.read()
        print(hashlib.sha256((snmp + snmp6).encode()).hexdigest())
        print(*[line for line in snmp.splitlines() if line.startswith("Ip:")])
        """
    mark = """
        import socket
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(37):
            try:
                s.sendto(b"x", ("127.0.0.1", 9))
            except OSError:
                pass
        """
    outs = _run_in_order(look, mark, look)
    assert all(o.status == "passed" for o in outs), outs
    assert "OutNoRoutes" in (outs[0].output_tail or ""), outs[0]
    assert outs[0].output_tail == outs[2].output_tail


def test_a_socket_that_outlives_its_candidate_does_not_reach_the_next() -> None:
    """An abstract Unix name held by a socket whose only reference is a
    descriptor in flight in its own queue stays bound after its candidate
    is gone, until the kernel's collector runs: the next candidate on the
    slot would find it (a bind fails, a connect succeeds). It finds a fresh
    namespace instead, with no socket in any table, and the name free."""
    mark = """
        import array, socket
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        a.bind(b"\\0aioeval-left-behind")
        fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [a.fileno(), b.fileno()]))]
        b.sendmsg([b"x"], fds)
        a.sendmsg([b"y"], fds)
        """
    follow = """
        import socket
        tables = {}
        for name in ("unix", "tcp", "tcp6", "udp", "udp6", "raw", "raw6", "packet"):
            with open("/proc/net/" + name) as f:
                tables[name] = f.read().splitlines()[1:]
        assert not any(tables.values()), tables
        s, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(b"\\0aioeval-left-behind")  # free: nothing of the last candidate's
        """
    outs = _run_in_order(mark, follow, follow)
    assert [o.status for o in outs] == ["passed"] * 3, outs
    assert outs[0].retire


def test_host_wide_counters_in_proc_carry_nothing() -> None:
    """Counters the kernel keeps for the whole host move with what a
    candidate does (50,000 failed lookups add 50,000 dentries; forks add to
    the process count) and stay moved: a later candidate could read them.
    They read as empty in the sandbox; what programs use of /proc stays."""
    mark = """
        import os
        for i in range(50000):
            try:
                os.stat(f"/usr/lib/aioeval-mark-{i}")
            except OSError:
                pass
        for _ in range(20):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        """
    look = """
        import os
        assert os.listdir("/proc/sys") == [], os.listdir("/proc/sys")
        assert not os.path.exists("/proc/sys/fs/dentry-state")
        for name in ("stat", "meminfo", "vmstat", "locks", "loadavg", "diskstats"):
            path = "/proc/" + name
            assert not os.path.exists(path) or open(path).read() == "", path
        # What honest programs read still works.
        assert "Pid:" in open("/proc/self/status").read()
        assert open("/proc/cpuinfo").read()
        assert os.cpu_count() and os.listdir("/proc/self/fd")
        print("masked")
        """
    outs = _run_in_order(look, mark, look)
    assert [o.status for o in outs] == ["passed"] * 3, outs
    assert "masked" in outs[2].output_tail


FLOW_LABEL = """
    import socket, struct
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    # struct in6_flowlabel_req: ::1, label 0x12345, GET, share any, CREATE, linger 150 s
    req = struct.pack(
        "16sIBBHHHI", socket.inet_pton(socket.AF_INET6, "::1"), socket.htonl(0x12345),
        0, 255, 1, 0, 150, 0,
    )
    try:
        s.setsockopt(socket.IPPROTO_IPV6, 32, req)  # IPV6_FLOWLABEL_MGR
        print("leased")
    except OSError as exc:
        print("refused", exc.errno)
    """


def test_a_flow_label_does_not_reach_the_next_candidate() -> None:
    """An IPv6 flow label outlives its socket in the namespace's table
    (``/proc/net/ip6_flowlabel``, up to 150 s) and sends no packet, so no
    counter moves: the next candidate would read the label. The lease is
    refused, and a label listed after a candidate retires the namespace."""
    look = """
        with open("/proc/net/ip6_flowlabel") as f:
            print(f.read().splitlines()[1:])
        """
    outs = _run_in_order(look, FLOW_LABEL, look)
    assert [o.status for o in outs] == ["passed"] * 3, outs
    assert outs[0].output_tail == outs[2].output_tail == "[]\n", outs
    assert outs[1].output_tail == "refused 92\n", outs[1]  # ENOPROTOOPT
