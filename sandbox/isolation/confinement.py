"""What a template set up, and what each child must apply to itself.

The one record the three halves of the layers share: `layers.setup` fills
it once per template, `confine.confine_child` reads it in every child, and
`between_jobs` uses it to clear up after each candidate. Its own module so
that each half imports the record, not the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import cgroups, marks, namespaces


@dataclass
class Confinement:
    """What a template set up, and what each child must apply to itself."""

    layers: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    host_pid: int = 0
    """The template's pid as the engine sees it (it is 1 in its namespace)."""
    uid: int | None = None
    drop_caps: bool = False
    nproc: int | None = None
    """RLIMIT_NPROC a child sets itself (user namespace: counted per namespace)."""
    ruleset_fd: int | None = None
    slot: cgroups.SlotCgroups = field(default_factory=cgroups.SlotCgroups)
    pid_init: bool = False
    """We are init of our own PID namespace: kill(-1) reaches every candidate."""
    ipc_private: bool = False
    ipc_ids: marks.IpcIds | None = None
    """Tells whether a candidate moved the SysV id cursors (see `marked`)."""
    net_counters: marks.NetCounters | None = None
    """Tells whether a candidate moved the network counters (see `marked`)."""
    pids: namespaces.PidShuffle | None = None
    """Randomises each candidate's pid (see `namespaces.PidShuffle`)."""
    shared_dir: str = ""
    """Where each served job's tmpfs is attached, shared with the verifier
    (see `sharedwd`); "" without a mount namespace of our own."""
    shared_root: str | None = None
    """A work root candidates can write to (no uid of their own): emptied
    after every candidate, so nothing left there reaches the next one."""

    @property
    def cgroups(self) -> list[str]:
        return self.slot.dirs

    def record(self, name: str, problem: str | None) -> bool:
        if problem is None:
            self.layers.append(name)
            return True
        self.missing.append(name)
        self.warnings.append(f"{name} unavailable: {problem}")
        return False
