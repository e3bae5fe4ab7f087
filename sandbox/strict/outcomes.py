"""How a question the test asks of the candidate can end other than with a
value: refused (only the candidate's code could answer it), the child
gone or exited, the candidate's error, or a test this model cannot run."""

from __future__ import annotations


class Refused(BaseException):
    """The test asked a question only the candidate's code could answer.

    The first one made in a check's process is kept (`first`): a test
    runner that catches everything (``unittest`` does) turns it into a
    test error and the check fails with the runner's own assertion, which
    must not hide the reason. A check's process is fresh, so nothing of
    another check is kept."""

    first: str | None = None
    told: str | None = None
    """A refusal the candidate's process was told of (as an error raised in
    its code, where the test's code does not see it): the check fails with
    it whatever the test does after."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        if Refused.first is None and args and type(args[0]) is str:
            Refused.first = args[0]


class CandidateGone(BaseException):
    """The candidate's child stopped answering (died, exited, was killed)."""


class CandidateExit(BaseException):
    """The candidate raised SystemExit or another BaseException-only type."""


class CandidateError(Exception):
    """The candidate's code raised, or sent back something that is not a value."""


class CheckSetupError(Exception):
    """The test cannot be run this way (an engine or suite limitation)."""
