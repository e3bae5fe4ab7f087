"""Marks a candidate leaves in the template's namespaces for the next one.

Some kernel state is per namespace, shared by the candidates of a slot,
readable by each and not reset by removing what made it: the SysV id
cursors, the network statistics. The template cannot wipe it, so it
checks after every candidate whether it moved, and retires itself when it
did (`layers.marked`): the next candidate gets fresh
namespaces.
"""

from __future__ import annotations

import ctypes
import itertools

from .. import frames
from .namespaces import IPC_RMID, _libc

IPC_PRIVATE = 0


class IpcIds:
    """Whether a candidate moved the namespace's SysV id cursors.

    Ids come from a cursor per kind that removing the objects does not
    reset: a candidate that creates and removes k queues moves the next
    candidate's first id by k, a number it can read. After every candidate
    the template creates and removes one object of each kind; when an id is
    not the one its own probes alone lead to, someone else moved the cursor
    and the template is retired (the next candidate gets a fresh namespace).

    Alone, our probes advance an id by one, except that the index cycles
    (over 64 slots on current kernels) and each new cycle starts at index 0
    with the sequence number one up; `LEARN` probes at start find where
    (without two cycles seen, any jump counts as moved: a needless retire,
    never a missed one).
    """

    LEARN = 160

    def __init__(self) -> None:
        seen = [self._probe() for _ in range(self.LEARN)]
        self.last = seen[-1]
        # Per kind: where cycles end (the id before a jump), the jump there,
        # and the distance from one cycle's end to the next (two cycles seen).
        self.wraps: list[tuple[int, int, int] | None] = []
        for kind in range(3):
            ids = [probe[kind] for probe in seen]
            ends = [a for a, b in itertools.pairwise(ids) if b != a + 1]
            wrap = None
            if len(ends) >= 2:
                end = ends[0]
                wrap = (end, ids[ids.index(end) + 1] - end, ends[1] - end)
            self.wraps.append(wrap)

    @staticmethod
    def _probe() -> tuple[int, int, int]:
        shm = int(_libc.shmget(IPC_PRIVATE, ctypes.c_size_t(1), 0o600))
        _libc.shmctl(shm, IPC_RMID, None)
        msg = int(_libc.msgget(IPC_PRIVATE, 0o600))
        _libc.msgctl(msg, IPC_RMID, None)
        sem = int(_libc.semget(IPC_PRIVATE, 1, 0o600))
        _libc.semctl(sem, 0, IPC_RMID)
        return shm, msg, sem

    def _next(self, kind: int, last: int) -> int:
        wrap = self.wraps[kind]
        if wrap is not None:
            end, jump, span = wrap
            if span > 0 and last >= end and (last - end) % span == 0:
                return last + jump
        return last + 1

    def moved(self) -> bool:
        """Did anything but our probes take ids since the last call? (Six
        syscalls; a failed probe counts as moved.)"""
        now = self._probe()
        expected = tuple(self._next(kind, last) for kind, last in enumerate(self.last))
        self.last = now
        return now != expected or min(now) < 0


class NetCounters:
    """Whether a candidate moved the network namespace's counters.

    The namespace is the template's, shared by its candidates, and its
    statistics (``/proc/net/snmp``: a UDP send with no route counts in
    ``OutNoRoutes``) are readable by each: k sends are a number the next
    candidate reads; so is a socket that outlives its candidate. Nothing
    but a candidate's network calls moves them (no interface is up), so after every candidate the template compares them
    with the last reading; when they moved, the template is retired and
    the next candidate gets a fresh namespace.
    """

    FILES = ("/proc/net/snmp", "/proc/net/snmp6", "/proc/net/netstat")
    UNIX = "/proc/net/unix"
    FLOWLABELS = "/proc/net/ip6_flowlabel"
    """IPv6 flow labels leased in the namespace outlive their socket (up to
    150 s) and send no packet, so no counter moves: one listed after a
    candidate is a mark (the seccomp filter refuses the lease where it is
    on)."""
    COUNTS = ("/proc/net/sockstat", "/proc/net/sockstat6")
    """Between candidates no socket exists in the namespace: a Unix socket
    listed in `UNIX`, or an ``inuse`` or ``tw`` count above zero in
    `COUNTS` (this namespace's TCP, UDP, raw sockets and fragments), outlived
    the candidate that made it (an abstract Unix name kept alive by a
    descriptor in flight, a socket lingering in a close state), and the
    next candidate could find it. (The socket tables themselves are not
    read: /proc/net/tcp walks the host's whole hash table, milliseconds.)
    Netlink and packet sockets cannot be made (see `seccomp_filter`)."""

    def __init__(self) -> None:
        self.last = self._read()
        self.channel: frozenset[bytes] = frozenset()
        """The inodes of the job's channel (its ends may still be open in
        the verifier when the child is gone): unnamed, nobody can find them."""

    def _read(self) -> bytes:
        out = []
        for path in self.FILES:
            try:
                out.append(frames.read_kept(path))
            except OSError:
                out.append(b"?")
        return b"\0".join(out)

    def moved(self) -> bool:
        """Did the counters change since the last call, or does a socket
        remain?"""
        now = self._read()
        moved, self.last = now != self.last, now
        return moved or self._sockets_left()

    def _flow_labels(self) -> bool:
        try:
            return len(frames.read_kept(self.FLOWLABELS).splitlines()) > 1  # after the header
        except FileNotFoundError:
            return False  # a kernel without IPv6 has no labels to lease

    def _sockets_left(self) -> bool:
        try:
            for line in frames.read_kept(self.UNIX).splitlines()[1:]:  # after the header
                fields = line.split()
                # ... Inode [Path]: a channel end counts once it has a name
                if len(fields) != 7 or fields[6] not in self.channel:
                    return True
            if self._flow_labels():
                return True
            for path in self.COUNTS:
                for line in frames.read_kept(path).splitlines():
                    if line.startswith(b"sockets:"):
                        continue  # every socket of the namespace, the channel's too
                    words = line.split()
                    for i in range(1, len(words) - 1):
                        if words[i] in (b"inuse", b"tw") and words[i + 1] != b"0":
                            return True
        except OSError:
            return True
        return False
