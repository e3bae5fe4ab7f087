"""Where candidates run: the executor protocol and its implementations.

Executors are registered by name in `REGISTRY` (``params.executor``); each
entry names a module and its ``from_config(RunConfig) -> Executor``
function, imported only when chosen, so optional dependencies (Ray) are
never needed by runs that do not use them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from aioeval.errors import ConfigError

from .base import Executor, ExecutorFacts, SandboxPool

if TYPE_CHECKING:
    from aioeval.config import RunConfig

REGISTRY: dict[str, str] = {
    "local": "aioeval.executors.local:from_config",
    "ray": "aioeval.executors.ray:from_config",
}

__all__ = ["REGISTRY", "Executor", "ExecutorFacts", "SandboxPool", "executor_name", "make_executor"]


def executor_name(cfg: RunConfig) -> str:
    """The executor ``params.executor`` names (a string, or settings with a ``kind``)."""
    tag = cfg.executor_settings.__struct_config__.tag
    return str(tag)


def make_executor(cfg: RunConfig) -> Executor:
    name = executor_name(cfg)
    if name not in REGISTRY:
        raise ConfigError(f"unknown executor {name!r}; choose one of {', '.join(REGISTRY)}")
    module, _, function = REGISTRY[name].partition(":")
    factory = getattr(importlib.import_module(module), function)
    executor: Executor = factory(cfg)
    return executor
