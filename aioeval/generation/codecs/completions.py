"""OpenAI legacy completions: ``POST /completions`` with a plain ``prompt``."""

from __future__ import annotations

from typing import Any

import msgspec

from aioeval.config import Params
from aioeval.types import Prompt

from ._openai import WireUsage, answer, decode, sampling_fields
from .base import Answer


class _Choice(msgspec.Struct):
    text: str | None = None
    index: int = 0
    finish_reason: str | None = None


class _Body(msgspec.Struct):
    choices: list[_Choice]
    usage: WireUsage | None = None


_DECODER = msgspec.json.Decoder(_Body)


class Completions:
    path = "/completions"

    def body(self, model: str, prompt: Prompt, n: int, params: Params) -> dict[str, Any]:
        return {**sampling_fields(model, params, n), "prompt": prompt.text}

    def prompt_text(self, prompt: Prompt) -> str:
        return prompt.text

    def parse(self, data: bytes) -> Answer:
        body = decode(_DECODER, data)
        choices = [(c.index, c.text or "", c.finish_reason) for c in body.choices]
        return answer(choices, body.usage)
