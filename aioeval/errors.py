"""The engine's exceptions. A failing candidate is never one of these: it is a
verdict. These are for the engine's own failures and for input it refuses.

    AioevalError                  base; str() is a one-line, user-facing reason
    ├── ConfigError               bad YAML, unknown key, wrong type (names the path)
    ├── InputError                bad samples/dataset file (names FILE:LINE)
    ├── DatasetError              dataset cannot be loaded, downloaded or verified
    ├── EndpointError             endpoint refused, unreachable or unsafe (SSRF)
    ├── SandboxError              the sandbox pool cannot start or run at all
    └── IncompleteRunError        the run finished but some samples are infra_error

    CandidateFault                not an engine error: what a suite raises when
                                  the answer itself cannot be judged (unparsable,
                                  a literal too large); that answer's ``error``.
                                  Any other exception while judging is the
                                  engine's, an ``infra_error``.
"""

from __future__ import annotations


class AioevalError(Exception):
    """Base class; the message is one line meant for the user."""


class ConfigError(AioevalError):
    pass


class InputError(AioevalError):
    pass


class DatasetError(AioevalError):
    pass


class EndpointError(AioevalError):
    pass


class SandboxError(AioevalError):
    pass


class IncompleteRunError(AioevalError):
    pass


class EngineErrors(ExceptionGroup, AioevalError):  # type: ignore[misc]
    """Several errors ended one run together: all of them, catchable as an
    AioevalError (its message lists each) or with ``except*``."""


class CandidateFault(Exception):
    """The answer itself cannot be judged: that answer's verdict, not an
    engine failure (see the module docstring)."""
