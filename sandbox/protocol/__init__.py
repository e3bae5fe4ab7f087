"""Wire protocol between the engine, its sandbox templates and its verifiers.

Frames are a 4-byte little-endian length followed by a msgpack body
(`encoding`). Every module of the sandbox side may import this package; it
imports no room of the sandbox. One module per link: `jobs` (engine and
template), `checks` (engine and verifier), `channel` (verifier and a
candidate's child).

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

from .channel import ARITHMETIC, ChannelMessage, Loaded, LoadFailed, Logged, Op, Reply
from .checks import Check, CheckResult, VerifierHello, VerifierReady
from .encoding import HEADER, MAX_FRAME, encode_frame
from .jobs import (
    RANDOM_SEED,
    Call,
    Checked,
    Hello,
    JobHead,
    Limits,
    Outcome,
    Program,
    Ready,
    Serve,
    Task,
    encode_job,
    task_of,
)

__all__ = [
    "ARITHMETIC",
    "HEADER",
    "MAX_FRAME",
    "RANDOM_SEED",
    "Call",
    "ChannelMessage",
    "Check",
    "CheckResult",
    "Checked",
    "Hello",
    "JobHead",
    "Limits",
    "LoadFailed",
    "Loaded",
    "Logged",
    "Op",
    "Outcome",
    "Program",
    "Ready",
    "Reply",
    "Serve",
    "Task",
    "VerifierHello",
    "VerifierReady",
    "encode_frame",
    "encode_job",
    "task_of",
]
