"""How a question the test asks of the candidate can end other than with a
value: refused (only the candidate's code could answer it), the child
gone or exited, the candidate's error, or a test this model cannot run."""

from __future__ import annotations


class Refused(BaseException):
    """The test asked a question only the candidate's code could answer."""


class CandidateGone(BaseException):
    """The candidate's child stopped answering (died, exited, was killed)."""


class CandidateExit(BaseException):
    """The candidate raised SystemExit or another BaseException-only type."""


class CandidateError(Exception):
    """The candidate's code raised, or sent back something that is not a value."""


class CheckSetupError(Exception):
    """The test cannot be run this way (an engine or suite limitation)."""
