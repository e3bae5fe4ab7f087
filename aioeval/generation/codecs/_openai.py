"""What OpenAI's two generation APIs share: sampling fields, usage, and
choices ordered by their ``index``. Wire shapes are lenient (unknown
fields are ignored), but a body without choices is malformed."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from aioeval.config import Params

from .base import Answer, Choice, Malformed, Usage

T = TypeVar("T")


class WireUsage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def sampling_fields(model: str, params: Params, n: int) -> dict[str, Any]:
    """Every body field but the prompt's."""
    body: dict[str, Any] = {"model": model, "max_tokens": params.max_tokens}
    if n > 1:
        body["n"] = n
    for key in ("temperature", "top_p", "stop", "seed"):
        value = getattr(params, key)
        if value is not None:
            body[key] = value
    return body


def decode(decoder: msgspec.json.Decoder[T], data: bytes) -> T:
    try:
        return decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise Malformed(str(exc)) from None


def answer(choices: list[tuple[int, str, str | None]], usage: WireUsage | None) -> Answer:
    """(index, text, finish_reason) triples, sorted by index, and the usage
    (None when it reports neither count)."""
    if not choices:
        raise Malformed("no choices")
    ordered = [Choice(text=t, finish_reason=f) for _, t, f in sorted(choices, key=lambda c: c[0])]
    if usage is None or (usage.prompt_tokens is None and usage.completion_tokens is None):
        return Answer(choices=ordered)
    used = Usage(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens)
    return Answer(choices=ordered, usage=used)
