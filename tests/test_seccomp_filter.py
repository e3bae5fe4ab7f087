"""The seccomp filter: its program (run here by a small classic-BPF
interpreter, for both architectures) and, through the real sandbox, the
attacks it stops: Unix sockets on the host, other socket families, new
namespaces, keyrings, io_uring.

Run inside the safety net (``tests/safety_net.sh python -m pytest ...``).
"""

from __future__ import annotations

import errno
import os
import re
import socket
import struct
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostcheck import assert_nothing_left, require_layers

from aioeval.executors.local import LocalPool
from aioeval.sandbox.isolation import seccomp_filter as sf
from aioeval.sandbox.protocol import Limits

pytestmark = pytest.mark.anyio

LIMITS = Limits(cpu_s=3.0, wall_s=8.0, memory_mb=512, fsize_mb=8, disk_mb=32, nproc=64)
ALLOW, KILL = "allow", "kill"
DONE = 0
"""An errno of 0: the call is answered as done without being made."""


def run_filter(code: bytes, arch: int, nr: int, args: tuple[int, ...] = ()) -> str | int:
    """Evaluate a classic BPF seccomp program: "allow", "kill" or an errno."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    insns = [struct.unpack_from("=HBBI", code, i) for i in range(0, len(code), 8)]
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = insns[pc]
        pc += 1
        if op == sf.LD_ABS_W:
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == sf.AND:
            acc &= k
        elif op in (sf.JEQ, sf.JGE, sf.JSET):
            hit = acc == k if op == sf.JEQ else acc >= k if op == sf.JGE else bool(acc & k)
            pc += jt if hit else jf
        elif op == sf.RET:
            if k == sf.RET_ALLOW:
                return ALLOW
            if k == sf.RET_KILL_PROCESS:
                return KILL
            assert k & 0xFFFF0000 == sf.RET_ERRNO
            return k & 0xFFFF
        else:
            raise AssertionError(f"unexpected opcode {op:#x}")


@pytest.mark.parametrize("machine", sorted(sf.ARCHES))
def test_filter_decisions(machine: str) -> None:
    arch = sf.ARCHES[machine]
    code = sf.build(arch)
    nr = arch.nr

    def call(name: str, *args: int) -> str | int:
        return run_filter(code, arch.audit, nr[name], args)

    assert call("socket", socket.AF_INET, socket.SOCK_STREAM) == ALLOW
    assert call("socket", socket.AF_INET6, socket.SOCK_DGRAM) == ALLOW
    for family in (socket.AF_UNIX, socket.AF_NETLINK, socket.AF_PACKET, 40, 0):  # 40: vsock
        assert call("socket", family, socket.SOCK_STREAM) == errno.EAFNOSUPPORT
    # Only the low 32 bits of an int argument count, as in the kernel.
    assert call("socket", (1 << 32) | socket.AF_UNIX) == errno.EAFNOSUPPORT
    flags = socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK
    assert call("socketpair", socket.AF_UNIX, socket.SOCK_STREAM | flags) == ALLOW
    assert call("socketpair", socket.AF_UNIX, socket.SOCK_SEQPACKET) == ALLOW
    for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW):  # unix SOCK_RAW is a datagram socket
        assert call("socketpair", socket.AF_UNIX, kind | flags) == errno.EPERM
    assert call("socketpair", socket.AF_INET, socket.SOCK_STREAM) == errno.EAFNOSUPPORT
    assert call("clone", 0x01200011) == ALLOW  # what fork() passes
    assert call("clone", 0x003D0F00) == ALLOW  # what pthread_create passes
    for flag in (0x10000000, 0x20000000, 0x40000000, 0x00020000, 0x08000000, 0x80):
        assert call("clone", 0x01200011 | flag) == errno.EPERM
    assert call("clone3") == errno.ENOSYS
    for advice in (0, 4, 8, 14, 15):  # NORMAL, DONTNEED, FREE, (NO)HUGEPAGE: malloc's
        assert call("madvise", 0, 4096, advice) == ALLOW
    for advice in sf.MADV_DENIED:
        assert call("madvise", 0, 4096, advice) == errno.EPERM
    for name in ("preadv2", "pwritev2"):
        assert call(name, 3, 0, 1, 0, 0, 0) == ALLOW
        assert call(name, 3, 0, 1, 0, 0, sf.RWF_NOWAIT) == errno.EPERM
    for name in sf.DENIED:
        if name in nr:
            assert call(name) == errno.EPERM, name
    assert call("getsockopt", 3, socket.SOL_SOCKET, 57) == errno.ENOPROTOOPT  # SO_COOKIE
    assert call("getsockopt", 3, socket.SOL_SOCKET, 71) == errno.ENOPROTOOPT  # SO_NETNS_COOKIE
    assert call("getsockopt", 3, socket.SOL_SOCKET, socket.SO_ERROR) == ALLOW
    assert call("getsockopt", 3, socket.IPPROTO_TCP, 57) == ALLOW  # another level's 57
    flowlabel_mgr = sf.IPV6_FLOWLABEL_MGR
    assert call("setsockopt", 3, socket.IPPROTO_IPV6, flowlabel_mgr) == errno.ENOPROTOOPT
    assert call("setsockopt", 3, socket.IPPROTO_IPV6, socket.IPV6_V6ONLY) == ALLOW
    assert call("setsockopt", 3, socket.SOL_SOCKET, flowlabel_mgr) == ALLOW  # SO_SNDBUFFORCE
    for command in sf.FCNTL_LOCKS:
        assert call("fcntl", 3, command) == errno.ENOLCK, command
    for command in sf.FCNTL_SET_LOCKS:  # answered as done, never taken
        assert call("fcntl", 3, command) == DONE, command
    for command in (0, 1, 2, 3, 4, 1030):  # DUPFD, GETFD, SETFD, GETFL, SETFL, DUPFD_CLOEXEC
        assert call("fcntl", 3, command) == ALLOW, command
    assert call("flock", 3, 2) == DONE
    for name in ("read", "write", "openat") if machine == "x86_64" else ():
        assert run_filter(code, arch.audit, {"read": 0, "write": 1, "openat": 257}[name]) == ALLOW
    assert run_filter(code, 0x40000003, 1) == KILL  # i386 entry on x86-64
    if arch.x32_bit:
        assert run_filter(code, arch.audit, sf.X32_BIT | nr["socket"], (1,)) == KILL


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _pool() -> LocalPool:
    pool = LocalPool(workers=1, limits=LIMITS)
    await pool.start()
    try:
        require_layers(pool, ("seccomp", "pid-namespace"))
    except BaseException:
        await pool.aclose()
        raise
    return pool


FOLLOWER = "import json\nassert json.loads(json.dumps({'a': [1, 2]})) == {'a': [1, 2]}\n"


async def _each_passes(*programs: str) -> None:
    """Each program, then an honest follower, passes in one slot in turn,
    and nothing is left behind on the host."""
    pool = await _pool()
    try:
        for program in (*programs, FOLLOWER):
            out = await pool.run(textwrap.dedent(program))
            assert out.status == "passed", out
        assert_nothing_left(pool)
    finally:
        await pool.aclose()


@pytest.fixture
def unix_listeners() -> Iterator[tuple[Path, socket.socket, socket.socket]]:
    """A world-writable directory of ours with a stream listener and a
    datagram socket in it, both mode 0777 (as X11's or D-Bus's are)."""
    where = Path(tempfile.mkdtemp(prefix="aioeval-unix-"))
    where.chmod(0o777)
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream.bind(str(where / "stream.sock"))
    stream.listen(4)
    stream.setblocking(False)
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(where / "dgram.sock"))
    dgram.setblocking(False)
    for name in ("stream.sock", "dgram.sock"):
        (where / name).chmod(0o777)
    yield where, stream, dgram
    stream.close()
    dgram.close()
    for name in ("stream.sock", "dgram.sock"):
        (where / name).unlink()
    where.rmdir()


async def test_unix_sockets_on_the_host_are_unreachable(
    unix_listeners: tuple[Path, socket.socket, socket.socket],
) -> None:
    where, stream, dgram = unix_listeners
    io_uring_setup = sf.ARCHES[os.uname().machine].nr["io_uring_setup"]
    program = f"""
        import ctypes, socket
        stream_path, dgram_path = {str(where / "stream.sock")!r}, {str(where / "dgram.sock")!r}
        def connect_stream():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(stream_path)
            s.sendall(b"hello")
        def send_datagram():
            socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"hello", dgram_path)
        def datagram_pair():
            a, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
            a.sendto(b"hello", dgram_path)
        def raw_pair():  # AF_UNIX SOCK_RAW is a datagram socket in disguise
            a, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW)
            a.sendto(b"hello", dgram_path)
        def abstract():
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("\\0aioeval-test")
        def stream_pair_sendto():
            a, _ = socket.socketpair()
            a.sendto(b"hello", dgram_path)
        def io_uring():
            libc = ctypes.CDLL(None, use_errno=True)
            params = ctypes.create_string_buffer(120)
            if libc.syscall({io_uring_setup}, 4, params) < 0:
                raise OSError(ctypes.get_errno(), "io_uring_setup")
        refused = []
        for attempt in (connect_stream, send_datagram, datagram_pair, raw_pair, abstract,
                        stream_pair_sendto, io_uring):
            try:
                attempt()
            except OSError as exc:
                refused.append(exc.errno)
            else:
                raise AssertionError(attempt.__name__ + " got through")
        # What ordinary code needs still works.
        a, b = socket.socketpair()
        a.sendall(b"x")
        assert b.recv(1) == b"x"
        print(refused)
    """
    pool = await _pool()
    try:
        out = await pool.run(textwrap.dedent(program))
        assert out.status == "passed", out
        with pytest.raises(BlockingIOError):
            stream.accept()  # no connection arrived
        with pytest.raises(BlockingIOError):
            dgram.recv(64)  # no datagram arrived
        assert sorted(os.listdir(where)) == ["dgram.sock", "stream.sock"]
        for _ in range(3):
            out = await pool.run(FOLLOWER)
            assert out.status == "passed", out
        assert_nothing_left(pool)
    finally:
        await pool.aclose()


async def test_kernel_surface_is_closed() -> None:
    nr = sf.ARCHES[os.uname().machine].nr
    attack = f"""
        import ctypes, os, socket
        libc = ctypes.CDLL(None, use_errno=True)
        def refused(result):
            return result == -1 and ctypes.get_errno() in (1, 38)  # EPERM, ENOSYS
        assert refused(libc.unshare(0x10000000)), "user namespace"
        assert refused(libc.unshare(0x40000000)), "network namespace"
        assert refused(libc.syscall({nr["clone3"]}, None, 0)), "clone3"
        for family in (40, socket.AF_NETLINK, socket.AF_PACKET):  # 40: AF_VSOCK
            try:
                socket.socket(family, socket.SOCK_RAW if family != 40 else socket.SOCK_STREAM)
            except OSError:
                continue
            raise AssertionError(f"socket family {{family}} created")
        # A key in the uid's keyring would outlive this candidate.
        key = libc.syscall({nr["add_key"]}, b"user", b"aioeval", b"leak", 4, -4)
        assert refused(key), "add_key"
        assert refused(libc.syscall({nr["setpriority"]}, 0, 0, 19)), "nice"
        assert refused(libc.syscall({nr["bpf"]}, 0, None, 0)), "bpf"
        # Threads, fork and subprocesses still work.
        import subprocess, threading
        box = []
        t = threading.Thread(target=box.append, args=(1,))
        t.start(); t.join()
        assert box == [1]
        pid = os.fork()
        if pid == 0:
            os._exit(3)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 3
        assert subprocess.run(["true"]).returncode == 0
    """
    look_for_the_key = f"""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        found = libc.syscall({nr["request_key"]}, b"user", b"aioeval", None, -4)
        assert found == -1, "a key from an earlier candidate"
    """
    await _each_passes(attack, look_for_the_key)


async def test_no_marks_on_host_file_times_or_attributes() -> None:
    """Write permission is enough to stamp a world-writable host file with
    "now" (a red-team search across samples kept its progress in the times
    of /dev's device nodes and passed without being right): every way to
    set times or extended attributes is refused, and nothing on the host
    moves."""
    devices = ("/dev/null", "/dev/zero", "/dev/full", "/dev/urandom")
    before = {p: os.stat(p).st_mtime_ns for p in devices if os.path.exists(p)}
    attack = f"""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        for path in {[*sorted(before), "/tmp"]!r}:  # /tmp: its times move with the host's files
            try:
                os.utime(path)
            except PermissionError:
                pass
            else:
                raise AssertionError(f"utime({{path}})")
            assert libc.utimes(path.encode(), None) == -1 and ctypes.get_errno() == 1, path
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.utime(fd)
            except PermissionError:
                pass
            else:
                raise AssertionError(f"futimens({{path}})")
            try:
                os.setxattr(fd, "user.mark", b"1")
            except PermissionError:
                pass
            else:
                raise AssertionError(f"setxattr({{path}})")
            finally:
                os.close(fd)
        # The candidate's own files still work.
        with open("own.txt", "w") as f:
            f.write("ok")
        assert open("own.txt").read() == "ok"
    """
    await _each_passes(attack)
    assert {p: os.stat(p).st_mtime_ns for p in before} == before  # nothing on the host moved


HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


@pytest.mark.parametrize("machine", sorted(sf.ARCHES))
def test_syscall_numbers_match_the_kernel_headers(machine: str) -> None:
    """Every number in the filter's table (capset included, which the
    user-namespace path calls) is the one the kernel's own header gives."""
    header = HEADERS[machine]
    if not header.exists():
        pytest.skip(f"{header} is not installed (Debian's linux-libc-dev has it)")
    defines: dict[str, str] = {}
    for line in header.read_text().splitlines():
        match = re.match(r"#define\s+__NR(3264)?_(\w+)\s+(\S+)", line)
        if match:
            defines[("3264_" if match[1] else "") + match[2]] = match[3]

    def value(name: str) -> int | None:
        text = defines.get(name)
        while text is not None and not text.isdigit():
            text = defines.get(text.removeprefix("__NR_").removeprefix("__NR"))
        return None if text is None else int(text)

    checked = 0
    for name, nr in sf.ARCHES[machine].nr.items():
        found = value(name)
        if found is None:  # newer than this header (cachestat, setxattrat, ...)
            continue
        assert found == nr, (machine, name, found, nr)
        checked += 1
    assert checked >= len(sf.ARCHES[machine].nr) - 4
    assert sf.number("capset", machine) == {"x86_64": 126, "aarch64": 91}[machine]


async def test_page_cache_residency_cannot_be_read_or_set() -> None:
    """mincore, cachestat, readahead, fadvise, RWF_NOWAIT reads and the
    madvise values that load or evict pages are refused; malloc's madvise
    and plain reads still work."""
    nr = sf.ARCHES[os.uname().machine].nr
    attack = f"""
        import ctypes, mmap, os
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        def refused(result):
            return result == -1 and ctypes.get_errno() == 1
        path = os.__file__
        fd = os.open(path, os.O_RDONLY)
        size = os.fstat(fd).st_size
        m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
        vec = ctypes.create_string_buffer(size // 4096 + 1)
        assert refused(libc.syscall({nr["mincore"]}, 0, 4096, vec)), "mincore"
        assert refused(libc.syscall({nr["cachestat"]}, fd, None, None, 0)), "cachestat"
        assert refused(libc.syscall({nr["readahead"]}, fd, 0, 4096)), "readahead"
        assert refused(libc.syscall({nr["fadvise64"]}, fd, 0, 0, 4)), "fadvise DONTNEED"
        for advice in (3, 21):  # WILLNEED, PAGEOUT
            try:
                m.madvise(advice)
            except OSError as exc:
                assert exc.errno == 1, exc
            else:
                raise AssertionError(f"madvise {{advice}}")
        try:
            os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)
        except OSError as exc:
            assert exc.errno == 1, exc
        else:
            raise AssertionError("RWF_NOWAIT read")
        assert refused(libc.syscall({nr["io_setup"]}, 1, ctypes.byref(ctypes.c_ulong()))), "aio"
        # What ordinary code does still works: reads, malloc's madvise.
        m.madvise(mmap.MADV_DONTNEED)
        assert os.pread(fd, 16, 0) and os.preadv(fd, [bytearray(4)], 0) == 4
        big = bytearray(64 << 20)
        del big
    """
    await _each_passes(attack)


async def test_host_wide_budgets_cannot_be_drained() -> None:
    """Budgets the kernel keeps for the whole host (or the engine's user):
    AIO contexts (fs.aio-max-nr), io_uring, inotify instances and watches,
    fanotify groups, ptys (kernel.pty.max). A candidate gets none of them,
    so a process outside the sandbox never finds them spent."""
    nr = sf.ARCHES[os.uname().machine].nr
    attack = f"""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        def refused(result):
            return result == -1 and ctypes.get_errno() in (1, 38)  # EPERM, ENOSYS
        ctx = ctypes.c_ulong(0)
        assert refused(libc.syscall({nr["io_setup"]}, 65536, ctypes.byref(ctx))), "io_setup"
        params = ctypes.create_string_buffer(120)
        assert refused(libc.syscall({nr["io_uring_setup"]}, 8, params)), "io_uring"
        assert refused(libc.syscall({nr["inotify_init1"]}, 0)), "inotify"
        assert refused(libc.syscall({nr["fanotify_init"]}, 0, 0)), "fanotify"
        for path in ("/dev/ptmx", "/dev/pts/ptmx"):
            try:
                os.open(path, os.O_RDWR | os.O_NOCTTY)
            except OSError:
                continue
            raise AssertionError("a pty from " + path)
    """
    with open("/proc/sys/fs/aio-nr") as fh:
        aio_before = int(fh.read())
    await _each_passes(attack)
    master, slave = os.openpty()  # the host's budget is whole
    os.close(master)
    os.close(slave)
    with open("/proc/sys/fs/aio-nr") as fh:
        assert int(fh.read()) <= aio_before


async def test_host_wide_counters_and_locks_are_out_of_reach() -> None:
    """Socket cookies (one host-wide counter), sysinfo (the host's thread
    count and free memory), reading a host file's locks and directory
    notification (F_NOTIFY, a watch like inotify) are refused; a lock is
    answered as taken but never held (no other process sees it), so sqlite
    on disk and the fcntl calls ordinary code makes work."""
    nr = sf.ARCHES[os.uname().machine].nr
    attack = f"""
        import ctypes, fcntl, os, socket
        libc = ctypes.CDLL(None, use_errno=True)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        for option in (57, 71):
            try:
                s.getsockopt(socket.SOL_SOCKET, option, 8)
            except OSError as exc:
                assert exc.errno == 92, exc  # ENOPROTOOPT
            else:
                raise AssertionError(f"cookie {{option}}")
        assert s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) == socket.SOCK_STREAM
        info = ctypes.create_string_buffer(128)
        assert libc.syscall({nr["sysinfo"]}, info) == -1 and ctypes.get_errno() == 1
        fd = os.open(os.__file__, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # answered as done, never taken
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        try:
            fcntl.fcntl(fd, fcntl.F_GETLK, bytes(32))
        except OSError as exc:
            assert exc.errno == 37, exc  # ENOLCK: a host process's locks are not read
        else:
            raise AssertionError("a host file's locks read")
        fcntl.flock(fd, fcntl.LOCK_EX)
        pid = os.fork()
        if pid == 0:  # another process takes the same lock at once: none was held
            other = os.open(os.__file__, os.O_RDONLY)
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        import sqlite3, tempfile
        db = os.path.join(tempfile.mkdtemp(), "t.db")
        con = sqlite3.connect(db)
        con.execute("create table t(a)")
        con.execute("insert into t values (1)")
        con.commit()
        assert sqlite3.connect(db).execute("select a from t").fetchall() == [(1,)]
        watched = os.open(os.path.dirname(os.__file__), os.O_RDONLY)
        try:
            fcntl.fcntl(watched, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
        except OSError as exc:
            assert exc.errno == 37, exc
        else:
            raise AssertionError("a directory watched with F_NOTIFY")
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
        assert fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC and flags >= 0
        os.set_blocking(fd, False)
    """
    await _each_passes(attack)
