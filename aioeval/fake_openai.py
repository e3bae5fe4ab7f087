"""Kept so that ``python -m aioeval.fake_openai`` (as the README shows) runs
the fake OpenAI-compatible server, which lives in `aioeval.testing.fake_openai`
(its command line in `aioeval.testing.fake_cli`)."""

from __future__ import annotations

import sys

from aioeval.testing.fake_cli import main
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers

__all__ = ["FakeConfig", "FakeOpenAI", "human_eval_answers", "main"]

if __name__ == "__main__":
    sys.exit(main())
