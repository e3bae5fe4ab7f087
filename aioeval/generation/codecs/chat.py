"""OpenAI chat completions: ``POST /chat/completions`` with ``messages``."""

from __future__ import annotations

from typing import Any

import msgspec

from aioeval.config import Params
from aioeval.types import Prompt

from ._openai import WireUsage, answer, decode, sampling_fields
from .base import Answer


class _Message(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    message: _Message = msgspec.field(default_factory=_Message)
    index: int = 0
    finish_reason: str | None = None


class _Body(msgspec.Struct):
    choices: list[_Choice]
    usage: WireUsage | None = None


_DECODER = msgspec.json.Decoder(_Body)


class Chat:
    path = "/chat/completions"

    def body(self, model: str, prompt: Prompt, n: int, params: Params) -> dict[str, Any]:
        return {**sampling_fields(model, params, n), "messages": prompt.messages}

    def prompt_text(self, prompt: Prompt) -> str:
        return "".join(m.get("content", "") for m in prompt.messages)

    def parse(self, data: bytes) -> Answer:
        body = decode(_DECODER, data)
        choices = [(c.index, c.message.content or "", c.finish_reason) for c in body.choices]
        return answer(choices, body.usage)
