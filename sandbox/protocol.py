"""Wire protocol between the engine, its sandbox templates and its verifiers.

Frames are a 4-byte little-endian length followed by a msgpack body. Every
module of the sandbox side imports this one (the template and verifier load
it from their own directory, because they run without site hooks and must
never import the engine).

Three kinds of process take part::

    engine ──Job──► template ──fork──► candidate child
       │               │                   │  (runs model code)
       │               └─ channel fd ─┐    │
       └──Check──► verifier ◄─────────┴────┘  calls and plain values
                   (runs the trusted test; never runs model code)

What the engine asks for is a `Task`:

- `Program`: run one program; it passes if it returns. This is the
  official harnesses' model (HumanEval/CRUXEval ``scoring: official``): the
  test runs in the candidate's own interpreter, so the candidate can forge
  its verdict. The child reports on a private pipe with a per-template
  secret, which keeps out accidents and printed text, not a determined
  candidate.
- `Call`: run trusted code (a CRUXEval problem's ``f``) and call a function
  with arguments sent as plain data; the value comes back as plain data and
  the engine judges it. No text of the model's answer is executed.
- `Checked`: the strict model for test-based suites. The candidate's program
  runs in a fresh child that only answers calls (`Serve`); the test runs in
  the slot's verifier, a separate trusted process, with its own globals and
  real builtins, calling the candidate through a proxy. Only plain data
  crosses (`plain`), and the verdict is the verifier's, combined with how the
  child ended: a child that dies, is killed or times out is never ``passed``.
"""

from __future__ import annotations

import struct
from typing import Any

import msgspec

HEADER = struct.Struct("<I")
MAX_FRAME = 64 * 1024 * 1024
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


# --- engine <-> verifier -------------------------------------------------------


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
    """A call of the candidate ran past its time limit: stop its child now,
    whatever the verdict (it would otherwise run out its budget)."""


# --- verifier <-> candidate child (the per-job channel) -------------------------
#
# Values travel as `wire` trees. Either side may ask the other to act on an
# object the other side owns (`Op`); the answer is a `Reply`. While a side
# waits for its reply it serves the other's requests, so a candidate can
# call back a function the test passed it, and that function can call the
# candidate again.


class Loaded(msgspec.Struct, frozen=True, tag="loaded", array_like=True):
    """The child ran the candidate's program and waits for requests.

    ``names``: ``[name, tree]`` for each function and class the program
    itself defines, so the test's names resolve as in the single program."""

    names: list[Any] = []


class LoadFailed(msgspec.Struct, frozen=True, tag="load_failed", array_like=True):
    """The candidate's program did not compile (``error``) or raised (``failed``)."""

    status: str
    reason: str


ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow")
"""Binary operators the child may apply to the test's objects (run by the
test's own code, in the verifier), as comparisons are."""


class Op(msgspec.Struct, frozen=True, tag="op", array_like=True):
    """Do ``op`` on object ``ref`` of the receiving side (a handle id in the
    child, an object id in the verifier; -1 with ``call`` and a name in
    ``args``: the child's global of that name, looked up at call time)."""

    ref: int
    op: str
    args: Any = None
    rand: Any = None
    """From the verifier: the state of its ``random`` when the test changed
    it since the last request (a test that seeds ``random`` and then calls
    the candidate sees the draws one program would make)."""
    out: str = ""
    err: str = ""
    """From the child: what the candidate's code printed to stdout and
    stderr since its last message, for the test's own ``sys.stdout`` and
    ``sys.stderr`` (a test that captures what the candidate prints)."""


class Reply(msgspec.Struct, frozen=True, tag="reply", array_like=True):
    """The answer to an `Op`: a value tree, or (``ok`` false) an exception
    tree; ``writeback`` is ``[n, tree]`` for each numbered container of the
    request that the callee changed (see `wire`)."""

    ok: bool
    value: Any = None
    writeback: list[Any] = []
    out: str = ""
    err: str = ""
    """See `Op`."""


class Logged(msgspec.Struct, frozen=True, tag="logged", array_like=True):
    """From the child, before a `Reply` or an `Op`: the log records the
    candidate's code emitted since its last message, each ``[logger name,
    level, message, function, line, traceback text or None]``, for the
    test's loggers (see `logtap`)."""

    records: list[Any]


ChannelMessage = Loaded | LoadFailed | Op | Reply | Logged

_encoder = msgspec.msgpack.Encoder()


def encode_frame(msg: object) -> bytes:
    try:
        body = _encoder.encode(msg)
    except UnicodeEncodeError:  # a lone surrogate: UTF-8 cannot carry it
        body = _encoder.encode(_escaped_message(msg))
    return HEADER.pack(len(body)) + body


_TREES = frozenset({"args", "value", "writeback", "names"})
"""The fields of a channel message that hold value trees (see `wire`)."""


def _escaped_message(msg: object) -> object:
    """``msg`` with each string that holds a lone surrogate made one UTF-8
    carries: in a value tree, ``["u", its surrogatepass bytes]``, which
    `wire` decodes to the same string; in text (what a program printed, a
    reason), its escape."""
    if not isinstance(msg, msgspec.Struct):
        raise TypeError("not a message")
    changes: dict[str, Any] = {}
    for name in msg.__struct_fields__:
        value = getattr(msg, name)
        if name in _TREES:
            changes[name] = _escaped(value)
        elif type(value) is str:
            changes[name] = value.encode("utf-8", "backslashreplace").decode()
    return msgspec.structs.replace(msg, **changes)


def _escaped(tree: Any) -> Any:
    if type(tree) is list:
        return [_escaped(x) for x in tree]
    if type(tree) is str:
        try:
            tree.encode()
        except UnicodeEncodeError:
            return ["u", tree.encode("utf-8", "surrogatepass")]
    return tree
