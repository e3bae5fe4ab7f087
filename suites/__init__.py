"""Benchmark suites, registered by name in one explicit table.

A suite is made for one run, bound to that run's parameters (its options:
scoring, prompt style, dataset), and is immutable after that. The CLI's
``--benchmark`` choices come from `REGISTRY`.
"""

from __future__ import annotations

from collections.abc import Callable

from aioeval.config import Params
from aioeval.errors import ConfigError

from .base import Suite
from .cruxeval.suite import CruxEvalI, CruxEvalO
from .evalplus.suite import EvalPlus, MbppPlus
from .human_eval.suite import HumanEval
from .livecodebench.io_suite import IoTests
from .livecodebench.suite import LiveCodeBench
from .mbpp.suite import Mbpp

REGISTRY: dict[str, Callable[[Params], Suite]] = {
    "human-eval": HumanEval,
    "cruxeval-o": CruxEvalO,
    "cruxeval-i": CruxEvalI,
    "mbpp": Mbpp,
    "humaneval-plus": EvalPlus,
    "mbpp-plus": MbppPlus,
    "livecodebench": LiveCodeBench,
    "io-tests": IoTests,
}

BENCHMARKS = tuple(REGISTRY)


def get_suite(name: str, params: Params | None = None) -> Suite:
    """The suite ``name``, bound to ``params`` (defaults if None)."""
    factory = REGISTRY.get(name)
    if factory is None:
        raise ConfigError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}")
    return factory(params if params is not None else Params())
