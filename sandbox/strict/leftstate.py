"""What the candidate's code left changed that the test's process does not
take (`mirror`'s facts), weighed in the verifier.

- The global ``random`` generator's state: `testrandom` fails the check
  if the test then uses the generator before setting it again.
- ``sys.path``: the verifier's imports must never follow a path the
  candidate chose (it could put its own modules in the test's way).
- A signal's handler: the handler is the candidate's code, which never
  runs in the verifier.
- A logger's filter (the candidate's code too): `logfilters` fails the
  check if the test's own code then logs to that logger.
- ``sys.stdout`` or ``sys.stderr`` left replaced after the candidate's
  call answered: the test's streams stay its own.
- A recursion limit lowered below the verifier's: the verifier's own
  calls between the processes run deeper than one program's, and would
  raise a ``RecursionError`` the test could take for the candidate's.

For ``sys.path``, handlers, streams and the recursion limit, a test whose
code names them (``sys`` and ``path``; ``signal`` or ``getsignal``;
``getrecursionlimit``) may check them, and its check would read the
verifier's own: the check fails with the reason, whatever the test does
after. Elsewhere the reason is only named should the check fail (an
honest answer that leaves a plugin directory on ``sys.path`` where no test
looks is judged as usual).
"""

from __future__ import annotations

from ..values import logfilters
from . import testrandom
from .outcomes import Refused, told


def weigh(kind: str, name: str, names: set[str]) -> None:
    """The child's fact ``kind`` (``random``, ``path``, ``signal``) about
    ``name``; ``names``: the names the test's code reads."""
    if kind == "random":
        testrandom.candidate_changed()
        return
    if kind == "logfilter":
        logfilters.watch_filtered(name, told)
        return
    if kind == "stream":
        looks = {"sys", name} <= names
        reason = (
            f"strict scoring: the candidate's code left sys.{name} replaced with a stream of "
            "its own, which the test's process does not take"
        )
    elif kind == "recursion":
        looks = "getrecursionlimit" in names
        reason = (
            f"strict scoring: the candidate's code lowered the recursion limit to {name[:20]},"
            " which the test's process does not take (its calls between the two processes"
            " run deeper than one program's)"
        )
    elif kind == "path":
        looks = {"sys", "path"} <= names
        reason = (
            "strict scoring: the candidate's code left sys.path changed, which the test's "
            "process does not take (its imports never follow the candidate's path)"
        )
    else:
        looks = bool({"signal", "getsignal"} & names)
        reason = (
            f"strict scoring: the candidate's code left its own handler for {name}, which the "
            "test's process does not take (the handler is the candidate's code)"
        )
    if looks:
        told(reason)
    else:
        Refused.note(reason)
