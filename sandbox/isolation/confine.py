"""The child half of the layers: what every forked child applies to itself,
right after fork and before the candidate's code.

Kept to a handful of syscalls, because it is paid per candidate (the
template half, `layers.setup`, is paid once per template).
"""

from __future__ import annotations

import ctypes
import os
import resource
import struct

from . import landlock_rules, seccomp_filter
from .confinement import Confinement

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _write(path: str, text: str) -> None:
    # Plain descriptors: in a freshly forked child the text-file machinery
    # costs five times as much (its first use copies the pages it touches).
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def confine_child(conf: Confinement) -> None:
    """Apply the per-process half of the layers to this forked child.

    Runs before any candidate code; raises OSError if a layer that the
    template reported cannot be applied, so the job becomes an error rather
    than an unconfined run.
    """
    if conf.slot.oom_events is not None:
        # Under memory pressure the kernel must pick the candidate, never
        # the template sharing its cgroup.
        _write("/proc/self/oom_score_adj", "1000")
    if conf.uid is not None:
        os.setgroups([])
        os.setresgid(conf.uid, conf.uid, conf.uid)
        os.setresuid(conf.uid, conf.uid, conf.uid)
    elif conf.drop_caps:
        _drop_capabilities()
        if conf.nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (conf.nproc, conf.nproc))
    if conf.ruleset_fd is not None:
        landlock_rules.restrict_self(conf.ruleset_fd)


def _drop_capabilities() -> None:
    capset = seccomp_filter.number("capset")
    if capset is None:
        raise OSError(0, f"no syscall table for {os.uname().machine}: cannot drop capabilities")
    header = ctypes.create_string_buffer(struct.pack("=Ii", 0x20080522, 0), 8)
    data = ctypes.create_string_buffer(24)  # two zeroed cap_user_data_t
    if int(_libc.syscall(capset, header, data)) != 0:
        raise OSError(ctypes.get_errno(), "capset")
