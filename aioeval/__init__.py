"""aioeval: an async, high-throughput evaluation engine for execution-scored
code benchmarks (HumanEval, CRUXEval-O, CRUXEval-I).

Library use, inside any running event loop::

    import aioeval
    summary = await aioeval.evaluate(aioeval.RunSpec(benchmark="human-eval"))
"""

from __future__ import annotations

from .config import RunConfig, load_config
from .errors import (
    AioevalError,
    ConfigError,
    DatasetError,
    EndpointError,
    IncompleteRunError,
    InputError,
    SandboxError,
)
from .events import Event, GenerationUpdate, ResultReady, RunFinished, RunStarted
from .executors import Executor, SandboxPool
from .executors.local import LocalPool
from .metrics import pass_at_k
from .run.evaluate import RunSpec, evaluate
from .run.streaming import RunHandle, open_run
from .service import Busy, Scorer, UnknownProblem
from .types import (
    CandidateResult,
    DatasetInfo,
    Error,
    Failed,
    InfraError,
    Measurement,
    Passed,
    Summary,
    Timeout,
    Verdict,
)

__all__ = [
    "AioevalError",
    "Busy",
    "CandidateResult",
    "ConfigError",
    "DatasetError",
    "DatasetInfo",
    "EndpointError",
    "Error",
    "Event",
    "Executor",
    "Failed",
    "GenerationUpdate",
    "IncompleteRunError",
    "InfraError",
    "InputError",
    "LocalPool",
    "Measurement",
    "Passed",
    "ResultReady",
    "RunConfig",
    "RunFinished",
    "RunHandle",
    "RunSpec",
    "RunStarted",
    "SandboxError",
    "SandboxPool",
    "Scorer",
    "Summary",
    "Timeout",
    "UnknownProblem",
    "Verdict",
    "evaluate",
    "load_config",
    "open_run",
    "pass_at_k",
]
