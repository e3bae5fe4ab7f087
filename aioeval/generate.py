"""Generation stage for llm-endpoint runs (filled in by the endpoint issue)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import RunConfig
from .errors import EndpointError
from .events import EventHook
from .types import Dataset

if TYPE_CHECKING:
    from .pipeline import Producer
    from .suites.base import Suite


async def endpoint_producer(
    suite: Suite, dataset: Dataset, cfg: RunConfig, emit: EventHook
) -> tuple[Producer, int]:
    raise EndpointError("the llm-endpoint platform is not available yet")
