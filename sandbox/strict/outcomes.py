"""How a question the test asks of the candidate can end other than with a
value: refused (only the candidate's code could answer it), the child
gone or exited, the candidate's error, or a test this model cannot run."""

from __future__ import annotations


class Refused(BaseException):
    """The test asked a question only the candidate's code could answer.

    Every refusal is kept (`told`): the check fails with the first one
    whatever the test does after, since a test that catches it (a bare
    ``except``, ``unittest``'s runner, ``except BaseException``) would
    otherwise go on down a path the single program never takes. A check's
    process is fresh, so nothing of another check is kept."""

    first: str | None = None
    """The first refusal or note (`note`): named should the check fail."""
    told: str | None = None
    """The first refusal or limit (`told`): the check fails with it."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        if args and type(args[0]) is str:
            Refused.first = Refused.first or args[0]
            Refused.told = Refused.told or args[0]

    @staticmethod
    def note(reason: str) -> None:
        """A reason to name should the check fail, which does not fail it:
        the candidate's code probed what strict scoring withholds and got
        an ``AttributeError``, as for an attribute that is not there."""
        Refused.first = Refused.first or reason


def told(reason: str) -> str:
    """What strict scoring cannot follow (a value that does not cross, a
    state the test's process cannot take, output past its budget): the
    check fails with ``reason`` whatever the test does after. Returns it."""
    Refused.told = Refused.told or reason
    Refused.first = Refused.first or reason
    return reason


STOPPED = (
    "strict scoring: the candidate's call raised {}, which ends a loop of the test's"
    " over its answers without a failure (an answer that computes nothing would pass)"
)


class CandidateGone(BaseException):
    """The candidate's child stopped answering (died, exited, was killed)."""


class CandidateExit(BaseException):
    """The candidate raised SystemExit or another BaseException-only type."""


class CandidateError(Exception):
    """The candidate's code raised, or sent back something that is not a value."""


class CheckSetupError(Exception):
    """The test cannot be run this way (an engine or suite limitation)."""
