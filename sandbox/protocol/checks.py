"""What the engine asks a slot's verifier for, and what it answers: the hello
and its ready, each check and its result."""

from __future__ import annotations

import msgspec


class VerifierHello(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    link_fd: int
    """The Unix socket on which the slot's template passes each job's channel."""
    cpu_s: float
    """CPU budget of one check in the verifier (the test's own work)."""
    wall_s: float
    """Longest the verifier waits for the candidate's child over one check."""
    memory_mb: int = 0
    """Address-space limit of the verifier (0: none): candidates' values can
    make a test allocate, and a test must not take the machine with it."""
    spin_s: float = 0.0
    """How long the verifier polls a channel before it sleeps."""
    isolation: str = "best"
    """The layers it confines each check with: strict, best or minimal, as
    for templates (see `layers`)."""
    work_root: str = ""
    """Where each check gets a fresh, private work directory (a tmpfs in its
    mount namespace where it has one): the only place a test may write."""
    disk_mb: int = 64
    """Size of that work directory."""
    fsize_mb: int = 64
    """Largest file a test may write."""
    nofile: int = 256
    """Descriptors a check may hold open."""
    hide: list[str] = []
    """Directories covered with an empty tmpfs (answer keys), as for templates."""
    shared_dir: str = ""
    """The slot's shared work directory path, as in the template's Hello:
    a check starts there when the template passes the job's tmpfs."""


class VerifierReady(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """The verifier's answer to VerifierHello: the cgroups it runs in (its
    CPU and memory are charged there, under the slot's limits; the engine
    removes them when it kills the verifier), the layers missing (names as
    in `Ready`), the layers in force, and a warning per missing layer."""

    cgroups: list[str] = []
    missing: list[str] = []
    layers: list[str] = []
    warnings: list[str] = []


class Check(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """The test half of a `Checked` task, for the slot's verifier."""

    id: int
    setup: str
    driver: str
    entry: str
    prelude: str = ""
    cpu_s: float = 0.0
    """The check's CPU budget (0: the hello's)."""


class CheckResult(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """The verifier's verdict: passed, failed, error or timeout."""

    id: int
    status: str
    reason: str = ""
    output: str = ""
    """What the test itself printed (bounded), for the output tail."""
    retire: bool = False
    """The verifier exits after this result: a check left state in its
    namespaces that the next check could read (see `marks`), or a check's
    process could not be set up. The engine starts the slot afresh."""
    stop: bool = False
    """A call of the candidate ran past its time limit, or a request of the
    test's is left waiting on the child: stop its child now, whatever the
    verdict (it would otherwise run out its budget)."""
    crossings: int = 0
    """Frames the verifier wrote to the candidate's child over the check
    (its requests and its answers): the engine grants the child CPU for
    serving them (`served_cpu_ms`) and names them when time runs out."""
