"""The endpoint-API seam: the only part of a request that differs by API.

A codec turns a prompt into the JSON body of one API's generation request
and that API's answer back into choices and usage. Everything else is the
same for every API and stays in `aioeval.generation.client`: HTTP, the SSRF
guard, the key (a Bearer token), timeouts, error mapping, rate-limit
headers and latency. So a new API is one module with one codec object,
entered in `aioeval.generation.codecs.REGISTRY` under the name
``target.api`` uses.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from aioeval.config import Params
from aioeval.types import Prompt


class Choice(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    finish_reason: str | None = None
    """Why the server stopped: ``stop``, ``length`` (cut at max_tokens), ..."""


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    """A decoded answer: its choices in sample order, and the usage reported."""

    choices: list[Choice]
    usage: Usage | None = None


class Malformed(Exception):
    """The body is not an answer of this API (the message says why)."""


class Codec(Protocol):
    """One endpoint API (see the module docstring)."""

    @property
    def path(self) -> str:
        """Where requests go, under the endpoint's base URL (``/chat/completions``)."""
        ...

    def body(self, model: str, prompt: Prompt, n: int, params: Params) -> dict[str, Any]:
        """The JSON body asking ``model`` for ``n`` samples of ``prompt``
        under the run's sampling parameters (``max_tokens``, ``temperature``...)."""
        ...

    def prompt_text(self, prompt: Prompt) -> str:
        """The prompt as the server counts it, for token estimates."""
        ...

    def parse(self, data: bytes) -> Answer:
        """The answer in ``data``; raises `Malformed` for anything else,
        including an answer without choices."""
        ...
