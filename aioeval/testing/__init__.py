"""Test doubles that tests, benchmarks and users share.

- `fake_openai`: a fake OpenAI-compatible server (real aiohttp on
  127.0.0.1) that can enforce rate limits, speak several rate-limit header
  dialects and inject faults (``python -m aioeval.fake_openai`` runs it),
  with what it answers in `fake_answers` and its command line in `fake_cli`;
- `clock`: `FakeClock`, virtual time for rate-limit and backoff tests;
- `executors`: executors that run nothing, for exercising the pipeline.
"""

from __future__ import annotations

from .clock import FakeClock
from .executors import GatedExecutor, ScriptedExecutor
from .fake_openai import FakeConfig, FakeOpenAI, human_eval_answers

__all__ = [
    "FakeClock",
    "FakeConfig",
    "FakeOpenAI",
    "GatedExecutor",
    "ScriptedExecutor",
    "human_eval_answers",
]
