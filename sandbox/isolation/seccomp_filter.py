"""A seccomp filter that takes kernel surface away from candidates.

Installed once in the template at the end of its setup and inherited by
every child it forks, so it costs nothing per candidate (syscalls the
filter allows whatever their arguments are answered from the kernel's
per-filter cache). The template itself needs none of what it refuses.

What it refuses, and why:

- sockets other than AF_INET/AF_INET6 (which the network namespace and
  Landlock already leave useless): no AF_UNIX socket can be made, so no
  filesystem or abstract Unix socket on the host (X11, D-Bus, a database)
  can be reached; no AF_NETLINK, AF_PACKET, AF_VSOCK or other families.
  ``socketpair`` stays for AF_UNIX stream and seqpacket pairs (asyncio and
  multiprocessing.Pipe use them); a datagram pair is refused, because
  ``sendto`` on it can name any socket path.
- new namespaces: ``unshare``, ``setns``, ``clone`` with a CLONE_NEW* flag;
  ``clone3`` answers ENOSYS so the C library falls back to ``clone``.
- ways around the other layers or into rarely hardened kernel code:
  io_uring (its operations bypass this filter), keyrings (a uid's keyring
  would outlive the candidate), POSIX message queues, bpf, perf events,
  userfaultfd, ptrace and process_vm_*, pidfd_getfd, the kernel log.
- scheduling changes (nice, policies, affinity), so a candidate cannot make
  itself look starved by the machine (see `fairness`).
- inotify and fanotify: Landlock does not cover watching, and a watch on a
  host directory names the files other programs create there.
- the page cache's residency, read or set without a clock: ``mincore`` and
  ``cachestat`` read it, ``readahead``, ``fadvise64`` and the ``madvise``
  advice values that load or evict pages (``WILLNEED``, ``COLD``,
  ``PAGEOUT``, ``POPULATE_*``) set it, and ``preadv2``/``pwritev2`` with
  ``RWF_NOWAIT`` (which answers whether a page is cached) would read it; a file
  any candidate may read is otherwise a shared bit array across samples,
  slots and runs. What is left is what a page fault tells (its kind, in
  the process's own counters) and timing; see docs/sandbox-inventory.md.
- Linux AIO (``io_setup`` and the rest): its contexts come from one
  host-wide budget (``fs.aio-max-nr``) that a candidate could drain for
  every other process on the machine.
- setting a file's times or extended attributes: Landlock does not cover
  them, and write permission is enough to stamp a world-writable host file
  (``/dev/null``, ``/dev/zero``, ``/tmp`` itself) with "now", so its times
  were a place for a candidate to leave marks that later candidates, other
  slots and later runs read back (a search across samples that passed
  without being right). Nothing a candidate writes in its own folder needs them.

- host-wide counters and shared lock tables: a socket's cookie
  (``getsockopt`` ``SO_COOKIE``, ``SO_NETNS_COOKIE``) comes from one counter
  for the whole host, which moves only when a cookie is asked for;
  ``sysinfo`` reports the host's thread count and free memory; file locks
  (``flock``, and ``fcntl``'s record, open-file-description and lease
  commands) on a host file any candidate may read are seen by candidates in
  other slots; ``fcntl``'s ``F_NOTIFY`` watches a directory as inotify
  does. Taking a lock (``flock``, ``F_SETLK`` and its forms) answers done
  without taking it: one program's locks never conflict with its own, so
  sqlite on disk works as in one process, and no lock is left for anyone
  to see. Reading locks (``F_GETLK``), leases and ``F_NOTIFY`` are
  refused, as are the cookies and ``sysinfo``.
- ``prlimit64`` on any process but the caller (pid 0): the kernel lets a
  process of the same uid lower another's limits without the ptrace checks
  Landlock scopes, and under a user namespace the candidates share the
  template's uid, so lowered limits on the template would reach every later
  candidate of its slot. ``setrlimit`` and ``getrlimit`` pass pid 0.

A syscall of another architecture (the i386 entry on x86-64) or an x32
syscall kills the process: the numbers below would not apply to it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

from .syscalls import ARCHES, Arch, number

__all__ = ["ARCHES", "Arch", "build", "install", "number"]

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

# Classic BPF opcodes.
LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
RET = 0x06  # BPF_RET | BPF_K

# struct seccomp_data offsets (little-endian: an argument's low 32 bits).
NR, ARCH = 0, 4


def _arg(n: int) -> int:
    return 16 + 8 * n


AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCK_STREAM, SOCK_SEQPACKET = 1, 5
CLONE_NEW_ANY = (
    0x00000080  # CLONE_NEWTIME
    | 0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
X32_BIT = 0x40000000

DENIED = (
    "unshare",
    "setns",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "syslog",
    "setpriority",
    "sched_setparam",
    "sched_setscheduler",
    "sched_setattr",
    "sched_setaffinity",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "fanotify_init",
    "fanotify_mark",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "setxattrat",
    "removexattrat",
    "mincore",
    "cachestat",
    "readahead",
    "fadvise64",
    "remap_file_pages",
    "io_setup",
    "io_destroy",
    "io_submit",
    "io_cancel",
    "io_getevents",
    "io_pgetevents",
    "sysinfo",
)
SOL_SOCKET = 1
COOKIES = (57, 71)
"""``SO_COOKIE`` and ``SO_NETNS_COOKIE``: values from host-wide counters."""
IPPROTO_IPV6 = 41
IPV6_FLOWLABEL_MGR = 32
"""Flow labels a socket leases live in the network namespace, listed in
``/proc/net/ip6_flowlabel``, for up to 150 s after their socket is gone:
the next candidate of the template could read one. No ordinary program
leases them."""
FCNTL_LOCKS = (5, 36, 1024, 1025, 1026)
"""``F_GETLK`` and ``F_OFD_GETLK`` (a host process's locks, read),
``F_SETLEASE``/``F_GETLEASE`` (a lease another process could see) and
``F_NOTIFY`` (directory notification: watching, like inotify): refused."""
FCNTL_SET_LOCKS = (6, 7, 37, 38)
"""``F_SETLK``, ``F_SETLKW`` and their ``F_OFD_`` forms: answered as done
without taking the lock, as `flock` is. A lock no other process sees is
what one program's locks are (a process never conflicts with its own), so
sqlite on disk works, and nothing is left for another slot or a host
process to see or wait on."""
RWF_NOWAIT = 0x8
MADV_DENIED = (3, 20, 21, 22, 23)
"""madvise advice values that change what is cached: WILLNEED, COLD,
PAGEOUT, POPULATE_READ, POPULATE_WRITE (malloc's DONTNEED and FREE stay)."""


_INSN = struct.Struct("=HBBI")


class _Program:
    """Classic BPF with forward jumps to named labels, resolved at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | int, str | int, int]] = []
        self.labels: dict[str, int] = {}

    def stmt(self, op: int, k: int) -> None:
        self.code.append((op, 0, 0, k))

    def jump(self, op: int, k: int, yes: str | int, no: str | int = 0) -> None:
        self.code.append((op, yes, no, k))

    def refuse_values(self, arg: int, values: tuple[int, ...], refusal: str) -> None:
        """Jump to ``refusal`` when argument ``arg`` is one of ``values``, else allow."""
        self.stmt(LD_ABS_W, _arg(arg))
        for value in values:
            self.jump(JEQ, value, refusal)
        self.stmt(RET, RET_ALLOW)

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for i, (op, yes, no, k) in enumerate(self.code):
            jt = yes if isinstance(yes, int) else self.labels[yes] - i - 1
            jf = no if isinstance(no, int) else self.labels[no] - i - 1
            if not (0 <= jt <= 255 and 0 <= jf <= 255):
                raise ValueError("seccomp jump out of range")
            out += _INSN.pack(op, jt, jf, k)
        return bytes(out)


def build(arch: Arch) -> bytes:
    """The filter program for `arch` (pure: tested without installing it)."""
    p = _Program()
    p.stmt(LD_ABS_W, ARCH)
    p.jump(JEQ, arch.audit, 0, "kill")
    p.stmt(LD_ABS_W, NR)
    if arch.x32_bit:
        p.jump(JGE, X32_BIT, "kill")
    p.jump(JEQ, arch.nr["socket"], "socket")
    p.jump(JEQ, arch.nr["socketpair"], "socketpair")
    p.jump(JEQ, arch.nr["clone"], "clone")
    p.jump(JEQ, arch.nr["clone3"], "enosys")
    p.jump(JEQ, arch.nr["madvise"], "madvise")
    p.jump(JEQ, arch.nr["preadv2"], "rwf")
    p.jump(JEQ, arch.nr["pwritev2"], "rwf")
    p.jump(JEQ, arch.nr["getsockopt"], "getsockopt")
    p.jump(JEQ, arch.nr["setsockopt"], "setsockopt")
    p.jump(JEQ, arch.nr["fcntl"], "fcntl")
    p.jump(JEQ, arch.nr["flock"], "done")
    p.jump(JEQ, arch.nr["prlimit64"], "prlimit")
    for name in DENIED:
        if name in arch.nr:  # arm64 has no inotify_init or utime, only their newer forms
            p.jump(JEQ, arch.nr[name], "eperm")
    p.stmt(RET, RET_ALLOW)
    p.label("socket")
    p.stmt(LD_ABS_W, _arg(0))
    p.jump(JEQ, AF_INET, "allow")
    p.jump(JEQ, AF_INET6, "allow", "eafnosupport")
    p.label("socketpair")
    p.stmt(LD_ABS_W, _arg(0))
    p.jump(JEQ, AF_UNIX, 0, "eafnosupport")
    p.stmt(LD_ABS_W, _arg(1))
    p.stmt(AND, 0xF)  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC
    p.jump(JEQ, SOCK_STREAM, "allow")
    p.jump(JEQ, SOCK_SEQPACKET, "allow", "eperm")
    p.label("clone")
    p.stmt(LD_ABS_W, _arg(0))
    p.jump(JSET, CLONE_NEW_ANY, "eperm", "allow")
    p.label("madvise")
    p.refuse_values(2, MADV_DENIED, "eperm")
    p.label("rwf")
    p.stmt(LD_ABS_W, _arg(5))
    p.jump(JSET, RWF_NOWAIT, "eperm", "allow")
    p.label("getsockopt")
    p.stmt(LD_ABS_W, _arg(1))
    p.jump(JEQ, SOL_SOCKET, 0, "allow")
    p.refuse_values(2, COOKIES, "enoprotoopt")
    p.label("setsockopt")
    p.stmt(LD_ABS_W, _arg(1))
    p.jump(JEQ, IPPROTO_IPV6, 0, "allow")
    p.refuse_values(2, (IPV6_FLOWLABEL_MGR,), "enoprotoopt")
    p.label("prlimit")
    p.stmt(LD_ABS_W, _arg(0))
    p.jump(JEQ, 0, "allow", "eperm")
    p.label("fcntl")
    p.stmt(LD_ABS_W, _arg(1))
    for value in FCNTL_SET_LOCKS:
        p.jump(JEQ, value, "done")
    p.refuse_values(1, FCNTL_LOCKS, "enolck")
    p.label("done")
    p.stmt(RET, RET_ERRNO | 0)
    p.label("enoprotoopt")
    p.stmt(RET, RET_ERRNO | errno.ENOPROTOOPT)
    p.label("enolck")
    p.stmt(RET, RET_ERRNO | errno.ENOLCK)
    p.label("enosys")
    p.stmt(RET, RET_ERRNO | errno.ENOSYS)
    p.label("eperm")
    p.stmt(RET, RET_ERRNO | errno.EPERM)
    p.label("eafnosupport")
    p.stmt(RET, RET_ERRNO | errno.EAFNOSUPPORT)
    p.label("allow")
    p.stmt(RET, RET_ALLOW)
    p.label("kill")
    p.stmt(RET, RET_KILL_PROCESS)
    return p.assemble()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> str | None:
    """Install the filter on the calling process (and so on all it forks)."""
    arch = ARCHES.get(os.uname().machine)
    if arch is None or ctypes.sizeof(ctypes.c_void_p) != 8:
        return f"no syscall table for {os.uname().machine}"
    code = build(arch)
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // _INSN.size, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    # no_new_privs lets an unprivileged process install a filter; the
    # template never executes anything, so it gives nothing up.
    if int(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0:
        return f"no_new_privs failed: {os.strerror(ctypes.get_errno())}"
    if int(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0)) != 0:
        return f"cannot install the seccomp filter: {os.strerror(ctypes.get_errno())}"
    return None
