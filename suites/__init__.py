"""Benchmark suites, registered by name in one explicit table."""

from __future__ import annotations

from aioeval.errors import ConfigError

from .base import Suite
from .human_eval import HumanEval


def _registry() -> dict[str, Suite]:
    table: dict[str, Suite] = {"human-eval": HumanEval()}
    try:
        from .cruxeval import CruxEvalI, CruxEvalO
    except ImportError:  # pragma: no cover - during development only
        return table
    table["cruxeval-o"] = CruxEvalO()
    table["cruxeval-i"] = CruxEvalI()
    return table


BENCHMARKS = ("human-eval", "cruxeval-o", "cruxeval-i")


def get_suite(name: str) -> Suite:
    table = _registry()
    if name not in table:
        raise ConfigError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}")
    return table[name]
