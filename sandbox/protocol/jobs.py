"""What the engine asks a template for, and what it answers: the tasks, the
hello and its ready, each job's head and its outcome."""

from __future__ import annotations

import msgspec

from .encoding import encode_frame

RANDOM_SEED = 0
"""``random`` starts from this seed in every candidate child (the template
seeds itself before forking) and before every check in the verifier: tests
see the same random numbers in both scoring models, and every run sees the
same ones."""


class Limits(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """Resource limits applied to every candidate child.

    cpu_s is the CPU-time budget (the verdict-defining timeout); wall_s is a
    backstop for candidates that sleep or block, chosen large enough that a
    loaded machine does not trip it for a candidate within its CPU budget.
    """

    cpu_s: float = 3.0
    wall_s: float = 10.0
    memory_mb: int = 2048
    fsize_mb: int = 64
    nofile: int = 256
    nproc: int = 512
    output_tail: int = 2048
    disk_mb: int = 256
    """Total size of the files a candidate may write (its private tmpfs)."""

    def for_task(self, cpu_s: float) -> Limits:
        """These limits with a task's own CPU budget (0: the pool's), the
        wall-clock backstop scaled with it so the two keep their ratio."""
        if cpu_s <= 0 or cpu_s == self.cpu_s:
            return self
        wall_s = self.wall_s * cpu_s / self.cpu_s
        return msgspec.structs.replace(self, cpu_s=cpu_s, wall_s=wall_s)


# --- what the engine asks for ------------------------------------------------


class Program(msgspec.Struct, frozen=True, kw_only=True, tag="program", array_like=True):
    """Run ``program``; passed when it returns (see the module docstring)."""

    program: str
    cpu_s: float = 0.0
    """This task's CPU budget (0: the pool's); see `Limits.for_task`."""


class Call(msgspec.Struct, frozen=True, kw_only=True, tag="call", array_like=True):
    """Run trusted ``program``, then return ``entry(*args, **kwargs)`` as plain data.

    ``args`` is ``plain.dumps([args, kwargs])``. ``args_source`` (vetted text
    only, e.g. a dataset's own input expression) is evaluated instead when set.
    """

    program: str
    entry: str
    args: bytes = b""
    args_source: str | None = None
    cpu_s: float = 0.0
    """This task's CPU budget (0: the pool's); see `Limits.for_task`."""


class Checked(msgspec.Struct, frozen=True, kw_only=True, tag="checked", array_like=True):
    """Run the candidate ``program`` in a child and the test in the verifier.

    The verifier runs ``setup`` in fresh globals, binds ``entry`` to a proxy of
    the candidate's function, then runs ``driver`` (e.g. ``check(entry)``).
    """

    program: str
    entry: str
    setup: str
    driver: str
    prelude: str = ""
    """Trusted code run before ``setup`` (a HumanEval prompt): names it
    defines that the candidate's program defines too resolve to the
    program's, as they would in the single program."""
    cpu_s: float = 0.0
    """This task's CPU budget, the child's and the test's alike (0: the
    pool's): a suite whose tests set their own limits (EvalPlus derives
    them from the reference's run time) sizes each task."""


Task = Program | Call | Checked


# --- engine <-> template -------------------------------------------------------


class Serve(msgspec.Struct, frozen=True, kw_only=True, tag="serve", array_like=True):
    """The candidate half of a `Checked` task: it carries no test, so nothing
    of the test is ever in the memory a candidate is forked from."""

    program: str
    entry: str
    cpu_s: float = 0.0


class Hello(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """First frame to a template: limits plus the environment for children."""

    limits: Limits
    env: dict[str, str]
    work_root: str
    isolation: str = "best"
    """strict, best or minimal: which isolation layers the template sets up."""
    hide: list[str] = []
    """Directories candidates must not read (e.g. a benchmark's answer key
    inside site-packages): covered by an empty directory where mounts allow."""
    link_fd: int = -1
    """The Unix socket to the slot's verifier (-1: none), for `Serve` jobs."""
    spin_s: float = 0.0
    """How long a served child polls its channel before it sleeps."""
    shared_dir: str = ""
    """Where a served job's candidate and its check share a work directory
    (the same path in the verifier; "": each keeps its own, see `sharedwd`)."""


class Ready(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """The template's answer to Hello: its pid and the layers it enabled."""

    pid: int
    layers: list[str]
    warnings: list[str]
    missing: list[str] = []
    """Layers the mode asked for that this machine cannot provide."""
    cgroups: list[str] = []
    """cgroup directories the template created (the engine removes leftovers)."""


class JobHead(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """A job as its template receives it: this frame, then ``size`` raw bytes
    of program text (UTF-8) outside msgpack.

    The template reads those bytes into one reusable buffer and wipes it as
    soon as the child is forked, and never turns them into Python objects,
    so no candidate's program survives in the memory that later candidates
    are forked from (a candidate cannot copy a sibling's answer from there).
    """

    id: int
    kind: str
    """``program``, ``call`` or ``serve``."""
    size: int
    entry: str = ""
    args: bytes = b""
    args_source: str | None = None
    cpu_s: float = 0.0
    """The job's CPU budget (0: the template's)."""


def encode_job(job_id: int, task: Program | Call | Serve) -> bytes:
    program = task.program.encode("utf-8", "surrogatepass")
    if isinstance(task, Call):
        head = JobHead(
            id=job_id,
            kind="call",
            size=len(program),
            entry=task.entry,
            args=task.args,
            args_source=task.args_source,
            cpu_s=task.cpu_s,
        )
    elif isinstance(task, Serve):
        head = JobHead(
            id=job_id, kind="serve", size=len(program), entry=task.entry, cpu_s=task.cpu_s
        )
    else:
        head = JobHead(id=job_id, kind="program", size=len(program), cpu_s=task.cpu_s)
    return encode_frame(head) + program


def task_of(head: JobHead, program: bytes) -> Program | Call | Serve:
    """The task a `JobHead` and its program bytes describe (in the child)."""
    text = program.decode("utf-8", "surrogatepass")
    if head.kind == "call":
        return Call(program=text, entry=head.entry, args=head.args, args_source=head.args_source)
    if head.kind == "serve":
        return Serve(program=text, entry=head.entry)
    return Program(program=text)


class Outcome(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """What happened to one job.

    status: passed, failed, timeout, error, or (a `Serve` child that ended
    normally, whose verdict is the verifier's) ``exited``. ``value`` holds the
    encoded value of a `Call`. Times are the child's, measured by the
    template (wall from fork to reap; CPU user+system of the child and the
    descendants it reaped).
    """

    id: int
    status: str
    reason: str = ""
    value: bytes | None = None
    wall_ms: float = 0.0
    cpu_ms: float = 0.0
    output_tail: str = ""
    tail_size: int = 0
    """On the template's stdout: raw bytes of the output tail that follow this
    frame (the engine fills ``output_tail`` from them). The template keeps
    them only in a buffer it wipes, like programs (see `JobHead`)."""
    reason_size: int = 0
    """Raw bytes of the child's own reason (UTF-8) that follow this frame,
    before the tail, from the same kind of wiped buffer: the engine appends
    them to ``reason``."""
    retire: bool = False
    """The child left state in the template's namespaces that could reach
    the next candidate (SysV id cursors, network counters): the template
    exits after this frame and the engine starts a fresh one for the next job."""
